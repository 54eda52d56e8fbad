#include "fuzz/model_config_case.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/core/model_config.h"

namespace npu::fuzz {
namespace {

std::string Integer(ChoiceSource& src) {
  static const std::vector<std::string> values = {
      "0",          "1",           "-1",         "8",          "16",        "2147483647", "2147483648",
      "-2147483649", "4294967296", "18446744073709551615", "18446744073709551616", "-9223372036854775809",
      "0x10",       "010",         "1.5",        "1e3",        "inf",       "-0",         "99999999999999999999999"};
  return src.Pick(values);
}

std::string String(ChoiceSource& src) {
  static const std::vector<std::string> values = {"\"mlp\"",     "\"\"",      "\"onnxruntime_onnx\"", "\"onnx\"",
                                                  "\"tensorrt_plan\"", "'x'", "\"\\xff\\x00\"",       "\"\xff\xfe\"",
                                                  "\"\\u00e9\"", "\"unterminated", "\"a\\\"b\""};
  return src.Pick(values);
}

std::string Enum(ChoiceSource& src) {
  static const std::vector<std::string> values = {"TYPE_FP32", "TYPE_FP16", "TYPE_INT64", "TYPE_STRING", "TYPE_BOGUS",
                                                  "KIND_GPU",  "KIND_CPU",  "KIND_NPU",   "KIND_MODEL",  "KIND_AUTO",
                                                  "REJECT",    "DELAY",     "11",         "1000",        "-3"};
  return src.Pick(values);
}

std::string Scalar(ChoiceSource& src) {
  switch (src.Below(4)) {
    case 0: return String(src);
    case 1: return Enum(src);
    case 2: return src.Chance(50) ? "true" : "false";
    default: return Integer(src);
  }
}

std::string List(ChoiceSource& src) {
  std::string s = "[";
  for (uint64_t i = 0, n = src.Below(5); i < n; ++i) s += (i ? ", " : "") + Integer(src);
  return s + (src.Chance(95) ? "]" : "");
}

std::string Deep(ChoiceSource& src) {
  const size_t n = src.Chance(50) ? 7 + src.Below(6) : 1000 + src.Below(40000);
  const std::string open = src.Chance(50) ? "dynamic_batching { " : "version_policy < ";
  std::string s;
  for (size_t i = 0; i < n; ++i) s += open;
  s += "priority_levels: 1";
  for (size_t i = 0; i < n; ++i) s += open[open.size() - 2] == '{' ? " }" : " >";
  return s;
}

std::string Message(ChoiceSource& src, int depth);

// One `field: value` or `field { ... }`, of the message's fields or not.
std::string Field(ChoiceSource& src, int depth) {
  static const std::vector<std::string> scalars = {
      "name",          "platform",      "backend",         "max_batch_size", "data_type",     "dims",
      "count",         "gpus",          "kind",            "preferred_batch_size", "max_queue_delay_microseconds",
      "preserve_ordering", "priority_levels", "default_priority_level", "timeout_action",
      "default_timeout_microseconds", "allow_timeout_override", "max_queue_size", "num_versions", "versions", "shape",
      "bogus_field",   "sequence_batching", "optimization", "model_warmup", "label_filename"};
  static const std::vector<std::string> messages = {
      "input", "output", "instance_group", "dynamic_batching", "default_queue_policy", "version_policy", "latest",
      "all", "specific", "reshape", "priority_queue_policy", "ensemble_scheduling", "parameters", "unknown_block"};
  if (depth > 0 && src.Chance(40)) {
    const bool angle = src.Chance(10);
    return absl::StrCat(src.Pick(messages), src.Chance(70) ? " " : ": ", angle ? "<" : "{", Message(src, depth - 1),
                        angle ? ">" : "}");
  }
  const std::string value = src.Chance(20) ? List(src) : Scalar(src);
  return absl::StrCat(src.Pick(scalars), src.Chance(90) ? ": " : " ", value);
}

std::string Message(ChoiceSource& src, int depth) {
  std::string s;
  for (uint64_t i = 0, n = src.Below(6); i < n; ++i) {
    s += Field(src, depth);
    s += src.Chance(10) ? (src.Chance(50) ? ";" : ",") : "\n";
    if (src.Chance(5)) s += "# comment \xff\n";
  }
  return s;
}

// A config near CheckConfig's rules: each bound met or just missed, to be
// cut or flipped too.
std::string Plausible(ChoiceSource& src) {
  const auto small = [&](int64_t from, int64_t n) { return from + static_cast<int64_t>(src.Below(n)); };
  std::string batching;
  if (src.Chance(80)) {
    batching = absl::StrCat("dynamic_batching { preferred_batch_size: [ ", small(-1, 40), ", ", small(1, 8),
                            " ] max_queue_delay_microseconds: ", src.Below(5000));
    if (src.Chance(50)) {
      absl::StrAppend(&batching, " priority_levels: ", small(0, 4), " default_priority_level: ", small(0, 5));
    }
    absl::StrAppend(&batching, " default_queue_policy { max_queue_size: ", src.Below(100), " } }\n");
  }
  return absl::StrCat("name: \"m\"\nplatform: \"onnxruntime_onnx\"\nmax_batch_size: ", small(-1, 33),
                      "\ninput [{ name: \"x\" data_type: TYPE_FP32 dims: [ ", small(-2, 6),
                      " ] }]\noutput { name: \"y\" data_type: TYPE_FP32 dims: [ 2 ] }\n", batching,
                      "instance_group [ { count: ", small(-1, 3), " kind: KIND_GPU gpus: [ ", small(-1, 3), " ] } ]\n",
                      src.Chance(50) ? absl::StrCat("version_policy: { latest { num_versions: ", src.Below(3), " } }\n")
                                     : absl::StrCat("version_policy: { specific { versions: [ ", small(-1, 4), ", ",
                                                    small(1, 11), " ] } }\n"));
}

}  // namespace

std::string GenerateModelConfigText(ChoiceSource& src) {
  std::string text;
  switch (src.Below(10)) {
    case 0: text = Deep(src); break;
    case 1: text = std::string(core::kMaxModelConfigBytes + src.Below(3), src.Chance(50) ? ' ' : '#'); break;
    case 2:
    case 3:
    case 4: text = Plausible(src); break;
    default: text = Message(src, 3); break;
  }
  if (src.Chance(20) && !text.empty()) text.resize(src.Below(text.size()));
  for (uint64_t i = 0, n = src.Chance(20) ? src.Below(4) : 0; i < n && !text.empty(); ++i) {
    text[src.Below(text.size())] ^= static_cast<char>(1 + src.Below(255));
  }
  return text;
}

std::string CheckModelConfigText(const std::string& text) {
  const std::string file = "repo/m/config.pbtxt";
  const absl::StatusOr<inference::ModelConfig> config = core::ParseModelConfig(text, file, "m");
  if (!config.ok()) {
    if (config.status().code() != absl::StatusCode::kInvalidArgument) {
      return absl::StrCat("refused with ", absl::StatusCodeToString(config.status().code()), ": ",
                          config.status().message().substr(0, 300));
    }
    const absl::string_view message = config.status().message();
    if (message.size() >= 4096) return absl::StrCat("an error of ", message.size(), " bytes");
    if (message.substr(0, file.size()) != file) return absl::StrCat("an error that does not name the file: ", message);
    return "";
  }
  const inference::ModelConfig& c = *config;
  if (c.max_batch_size() < 0) return absl::StrCat("accepted max_batch_size ", c.max_batch_size());
  if (c.has_dynamic_batching()) {
    const auto& b = c.dynamic_batching();
    if (c.max_batch_size() == 0) return "accepted dynamic_batching without max_batch_size";
    for (int32_t p : b.preferred_batch_size()) {
      if (p < 1 || p > c.max_batch_size()) return absl::StrCat("accepted preferred_batch_size ", p);
    }
    if (b.priority_levels() > 0 &&
        (b.default_priority_level() < 1 || b.default_priority_level() > b.priority_levels())) {
      return absl::StrCat("accepted default_priority_level ", b.default_priority_level());
    }
  }
  for (const auto& g : c.instance_group()) {
    if (g.count() < 0) return absl::StrCat("accepted instance count ", g.count());
  }
  const std::vector<std::string> versions = {"1", "2", "3", "10", "x"};
  size_t next = 0;  // what is served is a subsequence of the versions
  for (const std::string& v : core::VersionsServed(c, versions)) {
    const auto at = std::find(versions.begin() + static_cast<std::ptrdiff_t>(next), versions.end(), v);
    if (at == versions.end()) return absl::StrCat("VersionsServed answered \"", v, "\" out of order or not a version");
    next = static_cast<size_t>(at - versions.begin()) + 1;
  }
  return "";
}

}  // namespace npu::fuzz
