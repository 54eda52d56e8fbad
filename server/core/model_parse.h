// A model's bytes as a graph: an ONNX model imported by the server's own
// importer, or a serialized npu.v1.Graph. Registration and the model
// repository both read models this way.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "npu/v1/runtime.pb.h"

namespace npu::core {

// A model's graph, with the outputs it declares (ONNX's, with their types).
struct LoadedModel {
  std::shared_ptr<const v1::Graph> graph;
  std::vector<v1::ValueInfo> declared_outputs;
};

// The graph of `bytes`: an imported onnx.ModelProto, or a serialized npu.v1.Graph.
absl::StatusOr<LoadedModel> ParseModel(v1::RegisterGraphHeader::Format format, std::string bytes);

}  // namespace npu::core
