// Gather's output shape (ONNX): data's dims before `axis`, the indices' dims,
// data's dims after it. Shared by Gather and its gradient.
#pragma once

#include "absl/status/statusor.h"
#include "server/graph/op_registry.h"

namespace npu::graph::ops {

// Checks input `indices` (INT64 or INT32) and attribute "axis" against input
// `data`; INVALID_ARGUMENT naming them otherwise.
absl::StatusOr<Shape> GatheredShape(const InferContext& c, int data, int indices);

}  // namespace npu::graph::ops
