// Dynamic dimensions: a graph input's dim of -1 (what ONNX calls a dim_param,
// exported with dynamic_axes) is bound from the tensor a run brings. The plan
// is then made for those shapes (registered_graph.h caches one per bound
// signature).
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "npu/v1/graph.pb.h"
#include "server/graph/tensor_type.h"

namespace npu::graph {

inline constexpr int64_t kDynamicDim = -1;

bool HasDynamicDims(const v1::ValueInfo& input);
bool HasDynamicInputs(const v1::Graph& graph);

// "FLOAT32[?,4]": a declared input type, dynamic dims as "?".
std::string DeclaredTypeString(const v1::ValueInfo& input);

// A declared input type as ValidateType checks it, dynamic dims (-1) allowed:
// `what` names the input.
absl::Status ValidateDeclared(const v1::ValueInfo& input, const std::string& what);

// Checks that `given` fits `declared` (same dtype and rank, every static dim
// equal); the message names the input: `input "x" is FLOAT32[3,7]; the graph
// declares FLOAT32[?,4]`.
absl::Status CheckFits(const v1::ValueInfo& declared, const TensorType& given);

// Sets every graph input's shape to given[i] (one per graph input, in order),
// after CheckFits.
absl::Status BindInputShapes(v1::Graph& graph, const std::vector<TensorType>& given);

}  // namespace npu::graph
