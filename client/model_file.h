// A model as the client sends it: the file's bytes in a format the server
// registers (an ONNX model as is; a graph JSON as the deterministic
// serialization of its npu.v1.Graph) and their SHA-256, by which the server
// finds an earlier registration of the same content. The client never imports
// ONNX itself: the server does, for every client alike.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "npu/v1/graph.pb.h"
#include "npu/v1/runtime.pb.h"

namespace npu::client {

struct ModelFile {
  npu::v1::RegisterGraphHeader::Format format = npu::v1::RegisterGraphHeader::NPU_GRAPH;
  std::string bytes;
  std::string sha256;  // lowercase hex
};

// MODEL.onnx (ONNX) or GRAPH.json (npu.v1.Graph in protobuf's JSON mapping).
absl::StatusOr<ModelFile> ReadModelFile(const std::string& path);
ModelFile ModelOf(const npu::v1::Graph& graph);

}  // namespace npu::client
