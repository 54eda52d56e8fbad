// A trained model back as ONNX: the model the trainer was made from, its
// initializers replaced by the trained graph's of the same name (fp32), every
// other part (nodes, opset, metadata) as it came. So what torch exported runs
// with `npu run` (or onnxruntime) with the trained weights.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "npu/v1/graph.pb.h"

namespace npu::onnxio {

// `onnx_bytes`: a serialized onnx.ModelProto; `trained`: its import, trained.
// Returns the serialized model with `trained`'s initializers named in `names`
// (the parameters and running statistics; FLOAT32), each of which it must have.
absl::StatusOr<std::string> ReweightOnnx(const std::string& onnx_bytes, const v1::Graph& trained,
                                         const std::vector<std::string>& names);

}  // namespace npu::onnxio
