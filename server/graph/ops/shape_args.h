// Shape-like arguments of ops: axes (negative counts from the end) and integer
// tensors (shape, axes, starts, ...) that must be constants at plan time,
// because the output shape depends on their values. Arithmetic on what these
// return goes through shape_math.h (see the rule there).
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "server/graph/broadcast.h"
#include "server/graph/host_tensor.h"
#include "server/graph/node_error.h"
#include "server/graph/op_registry.h"
#include "server/graph/shape_math.h"

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

// Input `i` as integers; it must be an INT64/INT32 initializer of rank <= 1.
inline absl::StatusOr<std::vector<int64_t>> ConstantInts(const InferContext& c, int i) {
  const HostTensor* t = c.constants[i];
  if (t == nullptr) {
    return NodeError(c.node, InputLabel(c.node, i),
                     " must be a constant (an initializer): the output shape depends on its values");
  }
  if (t->type().dtype != v1::INT64 && t->type().dtype != v1::INT32) {
    return NodeError(c.node, InputLabel(c.node, i), " must be INT64 or INT32, got ", DataTypeName(t->type().dtype));
  }
  if (t->type().shape.size() > 1) {
    return NodeError(c.node, InputLabel(c.node, i), " must be a list (rank 1), got ", ToString(t->type()));
  }
  return TensorInts(*t);
}

// Input `i` as the dims of a shape (Reshape's shape, Expand's shape): a
// constant list of at most kMaxRank entries. Entries are not checked here
// (Reshape gives 0 and -1 meanings); check the result with CheckedElements.
inline absl::StatusOr<std::vector<int64_t>> ConstantShape(const InferContext& c, int i) {
  auto dims = ConstantInts(c, i);
  if (dims.ok() && dims->size() > kMaxRank) {
    return NodeError(c.node, InputLabel(c.node, i), " has ", dims->size(), " entries; the maximum rank is ", kMaxRank);
  }
  return dims;
}

// True when input i is present (not omitted, not past the end).
inline bool HasInput(const InferContext& c, int i) {
  return i < static_cast<int>(c.inputs.size()) && c.inputs[i] != nullptr;
}

// `axis` in [-rank, rank) mapped to [0, rank); a scalar (rank 0) has no axes.
// `what` names where the axis came from, for the message.
inline absl::StatusOr<int64_t> NormalizeAxis(const v1::Node& node, int64_t axis, int64_t rank,
                                             absl::string_view what = "attribute \"axis\"") {
  auto a = CheckedAxis(axis, rank, what);
  if (!a.ok()) return AtNode(node, a.status());
  return a;
}

// Every axis normalised; one named twice is an error.
inline absl::StatusOr<std::vector<int64_t>> NormalizeAxes(const v1::Node& node, const std::vector<int64_t>& axes,
                                                          int64_t rank, absl::string_view what) {
  auto a = CheckedAxes(axes, rank, what);
  if (!a.ok()) return AtNode(node, a.status());
  return a;
}

// The NumPy broadcast of inputs [first, first + count); the error names the
// input that does not broadcast.
inline absl::StatusOr<Shape> BroadcastInputs(const InferContext& c, int first, int count) {
  Shape shape = c.inputs[first]->shape;
  for (int i = first + 1; i < first + count; ++i) {
    auto s = BroadcastShapes(shape, c.inputs[i]->shape);
    if (!s.ok()) return NodeError(c.node, InputLabel(c.node, i), ": ", s.status().message());
    shape = *s;
  }
  return shape;
}

// The rows of a tensor along one axis (Softmax's): `rows` rows of `len`
// elements, element i of a row `inner` elements after element i - 1.
struct AxisRows {
  int64_t len = 1, inner = 1, rows = 0;
  // The first element of row r.
  int64_t Base(int64_t r) const { return (r / inner) * len * inner + r % inner; }
};
inline AxisRows RowsAlong(const Shape& s, int64_t axis) {
  const int64_t rank = static_cast<int64_t>(s.size());
  AxisRows a;
  a.len = rank == 0 ? 1 : s[axis];
  for (int64_t d = axis + 1; d < rank; ++d) a.inner *= s[d];
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  a.rows = a.len == 0 ? 0 : n / a.len;
  return a;
}

// INVALID_ARGUMENT naming the first index outside [-dim, dim) (Gather's indices input).
inline absl::Status CheckIndices(const v1::Node& node, const std::vector<int64_t>& indices, int64_t dim, int64_t axis) {
  for (size_t i = 0; i < indices.size(); ++i) {
    if (indices[i] < -dim || indices[i] >= dim) {
      return NodeError(node, InputLabel(node, 1), ": index ", indices[i], " at position ", i,
                       " is out of range for axis ", axis, " of size ", dim);
    }
  }
  return absl::OkStatus();
}

// Strides (in elements) of a row-major shape.
inline std::vector<int64_t> RowMajorStrides(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (int64_t i = static_cast<int64_t>(s.size()) - 2; i >= 0; --i) st[i] = st[i + 1] * s[i + 1];
  return st;
}

}  // namespace npu::graph::ops
