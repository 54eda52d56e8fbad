#include "server/core/model_registry.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/graph/bounded_text.h"

namespace npu::core {
namespace {

constexpr char kGraphVersion[] = "1";

absl::Status NoSuchVersion(absl::string_view name, absl::string_view version, const std::vector<std::string>& all) {
  return absl::NotFoundError(absl::StrCat("model ", graph::Quoted(name), " has no version ", graph::Quoted(version),
                                          " (versions: ", absl::StrJoin(all, ", "), ")"));
}

// The version to serve of a repository model: the one asked for, or the
// highest loaded.
absl::StatusOr<ServedModel> FromRepository(const ModelRepository::Model& m, absl::string_view name,
                                           absl::string_view version) {
  ServedModel model{std::string(name), "", {}, "", nullptr, m.config};
  for (const auto& v : m.versions) {
    if (!v.version.empty()) model.versions.push_back(v.version);
  }
  const ModelRepository::Version* pick = nullptr;
  for (const auto& v : m.versions) {
    if (version.empty() ? v.graph != nullptr : v.version == version) pick = &v;
  }
  if (pick == nullptr && !version.empty()) return NoSuchVersion(name, version, model.versions);
  if (pick == nullptr || pick->graph == nullptr) {
    std::vector<std::string> why;
    for (const auto& v : m.versions) {
      if (v.graph == nullptr && (version.empty() || v.version == version)) {
        why.push_back(v.version.empty() ? v.reason : absl::StrCat("version ", v.version, ": ", v.reason));
      }
    }
    return absl::UnavailableError(absl::StrCat("model ", graph::Quoted(name),
                                               version.empty() ? "" : absl::StrCat(" version ", graph::Quoted(version)),
                                               " is not loaded: ", absl::StrJoin(why, "; ")));
  }
  model.version = pick->version;
  model.platform = pick->platform;
  model.graph = pick->graph;
  return model;
}

}  // namespace

absl::StatusOr<ServedModel> ModelRegistry::Find(const std::string& tenant, absl::string_view name,
                                                absl::string_view version) const {
  if (name.empty()) return absl::InvalidArgumentError("the request names no model");
  if (repository_ != nullptr) {
    if (auto m = repository_->Get(name); m.ok()) return FromRepository(*m, name, version);
  }
  return FindRegistered(tenant, name, version);
}

absl::StatusOr<ServedModel> ModelRegistry::FindRegistered(const std::string& tenant, absl::string_view name,
                                                          absl::string_view version) const {
  ServedModel model{std::string(name), kGraphVersion, {kGraphVersion}, kRegisteredGraphPlatform, nullptr, nullptr};
  if (auto by_id = graphs_.Get(tenant, model.name); by_id.ok()) {
    model.graph = *std::move(by_id);
  } else {
    std::vector<std::string> ids;
    for (auto& [id, entry] : graphs_.List(tenant)) {
      if (entry->graph().name() != name) continue;
      ids.push_back(id);
      model.graph = std::move(entry);
    }
    if (ids.empty()) {
      return absl::NotFoundError(absl::StrCat("model ", graph::Quoted(name),
                                              " not found: ", repository_ ? "not in the model repository, and " : "",
                                              "no graph registered by this caller has that id or name"));
    }
    if (ids.size() > 1) {
      return absl::InvalidArgumentError(absl::StrCat("model name ", graph::Quoted(name), " is the name of ", ids.size(),
                                                     " registered graphs (", absl::StrJoin(ids, ", "),
                                                     "); name one by its id"));
    }
  }
  if (!version.empty() && version != kGraphVersion) return NoSuchVersion(name, version, model.versions);
  return model;
}

absl::StatusOr<ModelMetadata> ModelRegistry::Metadata(const std::string& tenant, absl::string_view name,
                                                      absl::string_view version) const {
  auto model = Find(tenant, name, version);
  if (!model.ok()) return model.status();
  return ModelMetadata{model->name, model->versions, model->platform, model->graph->inputs(),
                       model->graph->outputs()};
}

namespace {

inference::DataType TritonType(v1::DataType t) {
  switch (t) {
    case v1::FLOAT16: return inference::TYPE_FP16;
    case v1::FLOAT32: return inference::TYPE_FP32;
    case v1::INT32: return inference::TYPE_INT32;
    case v1::INT8: return inference::TYPE_INT8;
    case v1::BOOL: return inference::TYPE_BOOL;
    case v1::INT64: return inference::TYPE_INT64;
    default: return inference::TYPE_INVALID;  // known once a request binds the dims
  }
}

// A model's tensors as config entries: with batching, the first dim is the batch's.
template <typename Entry>
void FillTensors(const std::vector<v1::ValueInfo>& values, bool batched,
                 google::protobuf::RepeatedPtrField<Entry>* out) {
  for (const v1::ValueInfo& v : values) {
    Entry* e = out->Add();
    e->set_name(v.name());
    e->set_data_type(TritonType(v.dtype()));
    for (int i = batched ? 1 : 0; i < v.shape_size(); ++i) e->add_dims(v.shape(i));
  }
}

}  // namespace

absl::StatusOr<inference::ModelConfig> ModelRegistry::Config(const std::string& tenant, absl::string_view name,
                                                             absl::string_view version) const {
  auto model = Find(tenant, name, version);
  if (!model.ok()) return model.status();
  inference::ModelConfig c;
  if (model->config != nullptr) c = *model->config;
  if (c.name().empty()) c.set_name(model->name);
  if (c.platform().empty() && c.backend().empty()) {
    c.set_platform(model->platform == "onnx_onnxv1" ? "onnxruntime_onnx" : model->platform);
  }
  const bool batched = c.max_batch_size() > 0;
  if (c.input_size() == 0) FillTensors(model->graph->inputs(), batched, c.mutable_input());
  if (c.output_size() == 0) FillTensors(model->graph->outputs(), batched, c.mutable_output());
  return c;
}

std::vector<IndexEntry> ModelRegistry::Index(const std::string& tenant, bool ready_only) const {
  std::vector<IndexEntry> out;
  if (repository_ != nullptr) {
    for (const ModelRepository::Model& m : repository_->List()) {
      for (const ModelRepository::Version& v : m.versions) {
        if (ready_only && v.graph == nullptr) continue;
        out.push_back({m.name, v.version, v.graph != nullptr ? "READY" : "UNAVAILABLE",
                       v.graph == nullptr ? v.reason : ""});
      }
    }
  }
  // Registered graphs are always ready.
  for (const auto& [id, entry] : graphs_.List(tenant)) out.push_back({id, kGraphVersion, "READY", ""});
  return out;
}

absl::Status ModelRegistry::Load(const std::string& tenant, absl::string_view name,
                                 const std::vector<std::string>& parameters) {
  for (const std::string& key : parameters) {
    if (key == "config" || absl::StartsWith(key, "file:")) {
      return absl::UnimplementedError(absl::StrCat("load parameter ", graph::Quoted(key),
                                                   ": models are not uploaded through load; register the graph "
                                                   "(npu.v1 RegisterGraph) or put it in the model repository"));
    }
  }
  if (repository_ != nullptr) {
    absl::Status loaded = repository_->Load(name);
    if (!absl::IsNotFound(loaded)) return loaded;
  }
  return FindRegistered(tenant, name, "").status();
}

absl::Status ModelRegistry::Unload(const std::string& tenant, absl::string_view name) {
  if (repository_ != nullptr) {
    absl::Status unloaded = repository_->Unload(name);
    if (!absl::IsNotFound(unloaded)) return unloaded;
  }
  auto model = FindRegistered(tenant, name, "");
  if (!model.ok()) return model.status();
  for (const auto& [id, entry] : graphs_.List(tenant)) {
    if (entry == model->graph) return graphs_.Remove(tenant, id);
  }
  return absl::OkStatus();  // unregistered meanwhile
}

}  // namespace npu::core
