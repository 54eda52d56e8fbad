// npu.v1.Graph from its JSON form (protobuf's JSON mapping: no second parser).
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "npu/v1/graph.pb.h"

namespace npu::client {

// Errors name the file and protobuf's parse error.
absl::StatusOr<npu::v1::Graph> LoadGraphJson(const std::string& path);

// `source` names the text in errors.
absl::StatusOr<npu::v1::Graph> ParseGraphJson(absl::string_view json, absl::string_view source);

// Pretty JSON, for writing examples and debugging.
absl::StatusOr<std::string> GraphToJson(const npu::v1::Graph& graph);

}  // namespace npu::client
