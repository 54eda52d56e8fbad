// ONNX models -> npu.v1.Graph, on the server (one import for every client).
// Initializers become graph initializers (and are no longer graph inputs);
// node attributes map by type; dynamic input dims (dim_param, torch's
// dynamic_axes) become -1, bound from each run's inputs. Ops, attributes and
// domains the server does not run are refused here, all named in one error
// (grouped by op type), before anything is planned. Constant nodes stay nodes:
// import-time folding (server/graph/passes) turns them into initializers.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "npu/v1/graph.pb.h"
#include "onnx/onnx_pb.h"

namespace npu::onnxio {

struct ImportedModel {
  v1::Graph graph;
  // The graph outputs' types as the model declares them (-1 for a dynamic or
  // unknown dim; DATA_TYPE_UNSPECIFIED when the model does not say).
  std::vector<v1::ValueInfo> outputs;
};

// An ONNX tensor (raw_data or the typed fields) as a wire tensor; `what`
// names it in errors.
absl::StatusOr<v1::Tensor> OnnxTensorToTensor(const ::onnx::TensorProto& t, const std::string& what);

// Converts `model`, moving its tensors' raw bytes out (no copy of the weights).
absl::StatusOr<ImportedModel> ImportOnnxModel(::onnx::ModelProto model);

// Parses a serialized ModelProto (then frees `bytes`) and imports it.
absl::StatusOr<ImportedModel> ImportOnnxBytes(std::string bytes);

// Reads a binary .onnx file. Errors name the file.
absl::StatusOr<::onnx::ModelProto> LoadOnnxFile(const std::string& path);

}  // namespace npu::onnxio
