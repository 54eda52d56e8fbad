// ONNX models -> npu.v1.Graph. Initializers become graph initializers (and are
// no longer graph inputs); node attributes map by type; ops and attributes
// the server does not run are refused here, all named in one error, before
// anything is sent.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "npu/v1/graph.pb.h"
#include "onnx/onnx_pb.h"

namespace npu::onnxio {

// Shapes for inputs whose ONNX shape has symbolic (dynamic) dims.
using InputShapes = std::map<std::string, std::vector<int64_t>>;

// An ONNX tensor (raw_data or the typed fields) as a wire tensor; `what`
// names it in errors.
absl::StatusOr<v1::Tensor> OnnxTensorToTensor(const ::onnx::TensorProto& t, const std::string& what);

absl::StatusOr<v1::Graph> OnnxModelToGraph(const ::onnx::ModelProto& model, const InputShapes& shapes = {});

// Reads a binary .onnx file. Errors name the file.
absl::StatusOr<::onnx::ModelProto> LoadOnnxFile(const std::string& path);

// LoadOnnxFile + OnnxModelToGraph; the graph is named after the file.
absl::StatusOr<v1::Graph> LoadOnnxGraph(const std::string& path, const InputShapes& shapes = {});

}  // namespace npu::onnxio
