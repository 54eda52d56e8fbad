// A model's Triton configuration (DIR/NAME/config.pbtxt, protobuf text format,
// protos/triton/model_config.proto): read, bounded and checked before anything
// of it is used. An unknown field, or one of Triton's that npuserve does not
// serve, is an error naming it with the file, line and column; so is a value
// npuserve cannot serve (a platform other than ONNX, KIND_CPU instances, a
// preferred batch size past max_batch_size, ...), each by name. A model
// without a config.pbtxt is served as before (every version, no batching).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "triton/model_config.pb.h"

namespace npu::core {

inline constexpr char kModelConfigFile[] = "config.pbtxt";
// Bounds on untrusted config text: its size, and how deep messages nest (the
// deepest served field is 3 levels down; protobuf's default allows 100).
inline constexpr uint64_t kMaxModelConfigBytes = uint64_t{1} << 20;
inline constexpr int kMaxModelConfigNesting = 8;

// Parses and checks `text`, the config of model `model` read from `file`
// (which errors name).
absl::StatusOr<inference::ModelConfig> ParseModelConfig(absl::string_view text, const std::string& file,
                                                        const std::string& model);

// The versions `config`'s version_policy serves, of `versions` (ascending):
// Triton's default is the latest one.
std::vector<std::string> VersionsServed(const inference::ModelConfig& config, const std::vector<std::string>& versions);

}  // namespace npu::core
