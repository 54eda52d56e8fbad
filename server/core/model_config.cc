#include "server/core/model_config.h"

#include <algorithm>
#include <set>

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "server/graph/bounded_text.h"

namespace npu::core {
namespace {

using inference::ModelConfig;
using inference::ModelInstanceGroup;

// Keeps protobuf's first complaint with its place (lines and columns from 1).
class FirstError final : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column, const std::string& message) override {
    if (!message_.empty()) return;
    line_ = line + 1;
    column_ = column + 1;
    message_ = message;
  }
  std::string Where(const std::string& file) const { return absl::StrCat(file, ":", line_, ":", column_); }
  const std::string& message() const { return message_; }

 private:
  int line_ = 0, column_ = 0;
  std::string message_;
};

absl::Status Refuse(const std::string& file, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(file, ": ", what));
}

absl::Status CheckDims(const std::string& file, const std::string& where, const google::protobuf::RepeatedField<int64_t>& dims) {
  for (int64_t d : dims) {
    if (d < -1) return Refuse(file, absl::StrCat(where, " has dimension ", d, "; a dimension is -1 (any) or >= 0"));
  }
  return absl::OkStatus();
}

template <typename Tensor>
absl::Status CheckTensors(const std::string& file, const char* field,
                          const google::protobuf::RepeatedPtrField<Tensor>& tensors) {
  std::set<std::string> seen;
  for (int i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    const std::string where = t.name().empty() ? absl::StrCat(field, " #", i + 1)
                                               : absl::StrCat(field, " ", graph::Quoted(t.name()));
    if (t.name().empty()) return Refuse(file, absl::StrCat(where, " has no name"));
    if (!seen.insert(t.name()).second) return Refuse(file, absl::StrCat(where, " is declared twice"));
    if (t.data_type() == inference::TYPE_INVALID) return Refuse(file, absl::StrCat(where, " has no data_type"));
    if (auto s = CheckDims(file, where, t.dims()); !s.ok()) return s;
    if (t.has_reshape()) {
      if (auto s = CheckDims(file, absl::StrCat(where, "'s reshape"), t.reshape().shape()); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

absl::Status CheckConfig(const ModelConfig& c, const std::string& file, const std::string& model) {
  if (!c.name().empty() && c.name() != model) {
    return Refuse(file, absl::StrCat("name ", graph::Quoted(c.name()), " is not the model's folder name ",
                                     graph::Quoted(model), " (Triton requires them to agree)"));
  }
  if (!c.platform().empty() && c.platform() != "onnxruntime_onnx") {
    return Refuse(file, absl::StrCat("platform ", graph::Quoted(c.platform()),
                                     " is not served: npuserve serves ONNX models (platform \"onnxruntime_onnx\")"));
  }
  if (!c.backend().empty() && c.backend() != "onnxruntime" && c.backend() != "onnx") {
    return Refuse(file, absl::StrCat("backend ", graph::Quoted(c.backend()),
                                     " is not served: npuserve serves ONNX models (backend \"onnxruntime\" or \"onnx\")"));
  }
  if (c.max_batch_size() < 0) {
    return Refuse(file, absl::StrCat("max_batch_size is ", c.max_batch_size(), "; it is 0 (no batching) or more"));
  }
  if (auto s = CheckTensors(file, "input", c.input()); !s.ok()) return s;
  if (auto s = CheckTensors(file, "output", c.output()); !s.ok()) return s;
  if (c.has_dynamic_batching()) {
    const inference::ModelDynamicBatching& b = c.dynamic_batching();
    if (c.max_batch_size() == 0) {
      return Refuse(file, "dynamic_batching needs max_batch_size > 0 (the model's first dimension is the batch)");
    }
    for (int32_t p : b.preferred_batch_size()) {
      if (p < 1 || p > c.max_batch_size()) {
        return Refuse(file, absl::StrCat("dynamic_batching's preferred_batch_size ", p, " is not in [1, max_batch_size ",
                                         c.max_batch_size(), "]"));
      }
    }
    if (b.priority_levels() == 0 && b.default_priority_level() != 0) {
      return Refuse(file, "dynamic_batching's default_priority_level is set without priority_levels");
    }
    if (b.priority_levels() > 0 && (b.default_priority_level() < 1 || b.default_priority_level() > b.priority_levels())) {
      return Refuse(file, absl::StrCat("dynamic_batching's default_priority_level ", b.default_priority_level(),
                                       " is not in [1, priority_levels ", b.priority_levels(), "]"));
    }
  }
  for (int i = 0; i < c.instance_group_size(); ++i) {
    const ModelInstanceGroup& g = c.instance_group(i);
    const std::string where = absl::StrCat("instance_group #", i + 1);
    if (g.kind() == ModelInstanceGroup::KIND_CPU) {
      return Refuse(file, absl::StrCat(where, " is KIND_CPU: npuserve runs models on its npu devices "
                                              "(KIND_GPU or KIND_NPU, with gpus naming the devices)"));
    }
    if (g.kind() == ModelInstanceGroup::KIND_MODEL) {
      return Refuse(file, absl::StrCat(where, " is KIND_MODEL: npuserve places instances itself (KIND_GPU or KIND_NPU)"));
    }
    if (g.count() < 0) return Refuse(file, absl::StrCat(where, " has count ", g.count(), "; it is 1 or more"));
    for (int32_t d : g.gpus()) {
      if (d < 0) return Refuse(file, absl::StrCat(where, " names device ", d, "; devices are numbered from 0"));
    }
  }
  if (c.version_policy().has_specific()) {
    for (int64_t v : c.version_policy().specific().versions()) {
      if (v < 1) return Refuse(file, absl::StrCat("version_policy's specific version ", v, " is not a version (1, 2, ...)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ModelConfig> ParseModelConfig(absl::string_view text, const std::string& file, const std::string& model) {
  if (text.size() > kMaxModelConfigBytes) {
    return Refuse(file, absl::StrCat("holds ", text.size(), " bytes; a config.pbtxt is at most ", kMaxModelConfigBytes));
  }
  google::protobuf::TextFormat::Parser parser;
  FirstError error;
  parser.RecordErrorsTo(&error);
  parser.AllowUnknownField(false);
  parser.AllowUnknownExtension(false);
  parser.SetRecursionLimit(kMaxModelConfigNesting);
  ModelConfig config;
  if (!parser.ParseFromString(std::string(text), &config)) {
    // protobuf names the field or token it could not take; bounded, since it
    // quotes the file.
    std::string what = error.message().empty() ? "is not protobuf text format" : error.message();
    if (what.find("has no field named") != std::string::npos) {
      absl::StrAppend(&what, " (npuserve serves the fields docs/serving.md lists; Triton's others are refused)");
    }
    return absl::InvalidArgumentError(
        absl::StrCat(error.Where(file), ": ", graph::BoundedMessage(what, 320)));
  }
  if (auto s = CheckConfig(config, file, model); !s.ok()) return s;
  return config;
}

std::vector<std::string> VersionsServed(const ModelConfig& config, const std::vector<std::string>& versions) {
  const inference::ModelVersionPolicy& policy = config.version_policy();
  if (policy.has_all()) return versions;
  std::vector<std::string> out;
  if (policy.has_specific()) {
    for (const std::string& v : versions) {
      int64_t n = 0;
      if (!absl::SimpleAtoi(v, &n)) continue;
      const auto& wanted = policy.specific().versions();
      if (std::find(wanted.begin(), wanted.end(), n) != wanted.end()) out.push_back(v);
    }
    return out;
  }
  const size_t latest = std::max<uint32_t>(1, policy.latest().num_versions());
  const size_t from = versions.size() > latest ? versions.size() - latest : 0;
  return std::vector<std::string>(versions.begin() + static_cast<std::ptrdiff_t>(from), versions.end());
}

}  // namespace npu::core
