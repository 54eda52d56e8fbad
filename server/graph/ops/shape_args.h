// Shape-like arguments of ops: axes (negative counts from the end) and integer
// tensors (shape, axes, starts, ...) that must be constants at plan time,
// because the output shape depends on their values.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "server/graph/host_tensor.h"
#include "server/graph/node_error.h"
#include "server/graph/op_registry.h"

namespace npu::graph::ops {

// Elements of an INT64 or INT32 tensor.
inline std::vector<int64_t> TensorInts(const HostTensor& t) {
  const int64_t n = t.type().elements();
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    v[i] = t.type().dtype == v1::INT64 ? t.as<int64_t>()[i] : t.as<int32_t>()[i];
  }
  return v;
}

// Input `i` as integers; it must be an INT64/INT32 initializer.
inline absl::StatusOr<std::vector<int64_t>> ConstantInts(const InferContext& c, int i) {
  const HostTensor* t = c.constants[i];
  const std::string& name = c.node.inputs(i);
  if (t == nullptr) {
    return NodeError(c.node, "input \"", name,
                     "\" must be a constant (an initializer): the output shape depends on its values");
  }
  if (t->type().dtype != v1::INT64 && t->type().dtype != v1::INT32) {
    return NodeError(c.node, "input \"", name, "\" must be INT64 or INT32, got ", DataTypeName(t->type().dtype));
  }
  return TensorInts(*t);
}

// True when input i is present (not omitted, not past the end).
inline bool HasInput(const InferContext& c, int i) {
  return i < static_cast<int>(c.inputs.size()) && c.inputs[i] != nullptr;
}

// `axis` in [-rank, rank) mapped to [0, rank).
inline absl::StatusOr<int64_t> NormalizeAxis(const v1::Node& node, int64_t axis, int64_t rank,
                                             absl::string_view what = "axis") {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1)) {
    return NodeError(node, what, " ", axis, " is out of range for rank ", rank);
  }
  return axis < 0 ? axis + rank : axis;
}

// Strides (in elements) of a row-major shape.
inline std::vector<int64_t> RowMajorStrides(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (int64_t i = static_cast<int64_t>(s.size()) - 2; i >= 0; --i) st[i] = st[i + 1] * s[i + 1];
  return st;
}

}  // namespace npu::graph::ops
