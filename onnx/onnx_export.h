// An npu.v1.Graph as an ONNX model: the nodes, initializers and inputs as
// they are (the server's ops are ONNX's and keep their attributes; opset 17,
// or the nearest opset that has every node's op and form: onnx/opsets.h),
// so a model trained from a Graph (TrainingService Export ONNX) runs with
// `npu run` or any ONNX runtime. The inverse of the importer: importing the
// result gives back the graph.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "npu/v1/graph.pb.h"

namespace npu::onnxio {

// The ONNX opset exported when the graph's nodes allow it (what torch 1.13 exports).
inline constexpr int kExportOpset = 17;

// `outputs`: the graph outputs' types (dtype and rank; -1 dims are left
// unknown), which a Graph does not carry. FAILED_PRECONDITION naming the node
// when an op is not ONNX's own (a training op) or an attribute is one the
// importer would refuse.
absl::StatusOr<std::string> ExportOnnx(const v1::Graph& graph, const std::vector<v1::ValueInfo>& outputs);

}  // namespace npu::onnxio
