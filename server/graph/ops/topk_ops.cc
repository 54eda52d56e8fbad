// TopK (ONNX opset 11+: K a constant input, largest, sorted) and Hardmax
// (opset 13: one axis). Each slice along the axis is searched on the Scalar
// and Vector units: TopK returns the k largest (or smallest) values and their
// INT64 indices, sorted, equal values by ascending index (ONNX's rule); NaN
// ranks above every number (torch). Hardmax writes 1 at the first maximum of
// each slice and 0 elsewhere.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "server/device/vector_passes.h"
#include "server/graph/element_access.h"
#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/shape_args.h"
#include "server/graph/ops/vector_chunks.h"
#include "server/graph/vector_tiling.h"

namespace npu::graph::ops {
namespace {

// A slice along `axis`: outer x len x inner.
struct AxisSplit {
  int64_t outer = 1, len = 1, inner = 1;
};

AxisSplit SplitAt(const Shape& s, int64_t axis) {
  AxisSplit a;
  for (int64_t d = 0; d < static_cast<int64_t>(s.size()); ++d) {
    if (d < axis) a.outer *= s[d];
    if (d > axis) a.inner *= s[d];
  }
  a.len = s[axis];
  return a;
}

struct TopKPlan {
  AxisSplit in;
  int64_t k = 0;
  bool largest = true;
};

bool IsIntegerType(DataType t) { return t == v1::INT32 || t == v1::INT64; }

absl::StatusOr<std::vector<TensorType>> InferTopK(InferContext& c) {
  const TensorType& x = *c.inputs[0];
  if (!IsFloat(x.dtype) && !IsIntegerType(x.dtype)) {
    return NodeError(c.node, InputLabel(c.node, 0), ": dtype ", DataTypeName(x.dtype),
                     " is not supported (FLOAT16, FLOAT32, INT32, INT64)");
  }
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  auto attr = c.attrs.Int("axis", -1);
  if (!attr.ok()) return attr.status();
  auto axis = NormalizeAxis(c.node, *attr, rank);
  if (!axis.ok()) return axis.status();
  auto k = ConstantInts(c, 1);
  if (!k.ok()) return k.status();
  if (k->size() != 1) return NodeError(c.node, InputLabel(c.node, 1), ": K must hold one value, got ", k->size());
  if ((*k)[0] < 0 || (*k)[0] > x.shape[*axis]) {
    return NodeError(c.node, InputLabel(c.node, 1), ": K = ", (*k)[0], " is outside [0, ", x.shape[*axis],
                     "] (the size of axis ", *axis, ")");
  }
  auto largest = c.attrs.Int("largest", 1);
  auto sorted = c.attrs.Int("sorted", 1);
  if (!largest.ok()) return largest.status();
  if (!sorted.ok()) return sorted.status();
  Shape out = x.shape;
  out[*axis] = (*k)[0];
  c.Prepare(TopKPlan{SplitAt(x.shape, *axis), (*k)[0], *largest != 0});
  return std::vector<TensorType>{{x.dtype, out}, {v1::INT64, out}};
}

// Widens slice elements to double (exact for fp32/fp16/int32; int64 beyond
// 2^53 compares as int64 below).
template <typename T>
void RunTopKTyped(RunContext& ctx, const TopKPlan& p, const std::vector<T>& x) {
  const HostTensor& values = ctx.outputs[0];
  // A node may leave Indices out (the planner accepts 1 to num_outputs outputs).
  const HostTensor* indices = ctx.outputs.size() > 1 ? &ctx.outputs[1] : nullptr;
  const int64_t slices = p.in.outer * p.in.inner;
  std::vector<T> picked(static_cast<size_t>(values.type().elements()));
  auto better = [&](T a, int64_t ia, T b, int64_t ib) {
    if constexpr (std::is_floating_point_v<T>) {
      const bool na = std::isnan(a), nb = std::isnan(b);
      if (na || nb) return na && !nb ? p.largest : (!na && nb ? !p.largest : ia < ib);
    }
    if (a != b) return p.largest ? a > b : a < b;
    return ia < ib;
  };
  ForEachUnitTile(ctx, slices, [&](device::TileWork& w, int64_t s0, int64_t s1) {
    std::vector<int64_t> order(static_cast<size_t>(p.in.len));
    for (int64_t s = s0; s < s1; ++s) {
      const int64_t o = s / p.in.inner, i = s % p.in.inner;
      const int64_t base = o * p.in.len * p.in.inner + i;
      std::iota(order.begin(), order.end(), 0);
      std::partial_sort(order.begin(), order.begin() + p.k, order.end(), [&](int64_t a, int64_t b) {
        return better(x[base + a * p.in.inner], a, x[base + b * p.in.inner], b);
      });
      for (int64_t j = 0; j < p.k; ++j) {
        const int64_t at = (o * p.k + j) * p.in.inner + i;
        picked[at] = x[base + order[j] * p.in.inner];
        if (indices != nullptr) indices->mutable_as<int64_t>()[at] = order[j];
      }
      // A compare-and-select per element per log2(k) rounds of the selection network.
      const int64_t rounds = 1 + static_cast<int64_t>(std::log2(static_cast<double>(std::max<int64_t>(2, p.k))));
      w += VectorChunkWork(p.in.len, p.in.len * static_cast<int64_t>(sizeof(T)), p.k * 8, 4,
                           rounds * device::VectorPasses(device::VectorKernel::kCompare));
      w.scalar_instructions += 2 * static_cast<uint64_t>(p.k);
    }
  });
  if constexpr (std::is_same_v<T, int64_t>) {
    StoreFromInt64(values, 0, values.type().elements(), picked.data());
  } else {
    std::vector<float> f(picked.begin(), picked.end());
    StoreFromFloat(values, 0, values.type().elements(), f.data(), false);  // values the input had: exact
  }
}

absl::Status RunTopK(RunContext& ctx) {
  const TopKPlan& p = ctx.State<TopKPlan>();
  const HostTensor& x = *ctx.inputs[0];
  const int64_t n = x.type().elements();
  if (IsIntegerType(x.type().dtype)) {
    std::vector<int64_t> v(static_cast<size_t>(n));
    LoadAsInt64(x, 0, 1, n, v.data());
    RunTopKTyped(ctx, p, v);
  } else {
    std::vector<float> v(static_cast<size_t>(n));
    LoadAsFloat(x, 0, 1, n, v.data());
    RunTopKTyped(ctx, p, v);
  }
  return absl::OkStatus();
}

// ---- Hardmax ---------------------------------------------------------------

absl::StatusOr<std::vector<TensorType>> InferHardmax(InferContext& c) {
  const TensorType& x = *c.inputs[0];
  if (!IsFloat(x.dtype)) {
    return NodeError(c.node, InputLabel(c.node, 0), ": dtype ", DataTypeName(x.dtype),
                     " is not supported (FLOAT16, FLOAT32)");
  }
  auto attr = c.attrs.Int("axis", -1);
  if (!attr.ok()) return attr.status();
  auto axis = NormalizeAxis(c.node, *attr, static_cast<int64_t>(x.shape.size()));
  if (!axis.ok()) return axis.status();
  c.Prepare(SplitAt(x.shape, *axis));
  return std::vector<TensorType>{x};
}

absl::Status RunHardmax(RunContext& ctx) {
  const AxisSplit& a = ctx.State<AxisSplit>();
  const HostTensor& x = *ctx.inputs[0];
  const HostTensor& out = ctx.outputs[0];
  const int64_t n = x.type().elements();
  std::vector<float> v(static_cast<size_t>(n));
  LoadAsFloat(x, 0, 1, n, v.data());
  std::vector<float> y(static_cast<size_t>(n), 0.0f);
  const int64_t esize = static_cast<int64_t>(ElementSize(x.type().dtype));
  ForEachUnitTile(ctx, a.outer * a.inner, [&](device::TileWork& w, int64_t s0, int64_t s1) {
    for (int64_t s = s0; s < s1; ++s) {
      const int64_t base = (s / a.inner) * a.len * a.inner + s % a.inner;
      int64_t best = 0;
      for (int64_t j = 1; j < a.len; ++j) {
        if (v[base + j * a.inner] > v[base + best * a.inner]) best = j;  // the first maximum; NaN never wins
      }
      if (a.len > 0) y[base + best * a.inner] = 1.0f;
      w += VectorChunkWork(a.len, a.len * esize, a.len * esize, 4, device::VectorPasses(device::VectorKernel::kReduce));
    }
  });
  StoreFromFloat(out, 0, n, y.data(), false);
  return absl::OkStatus();
}

}  // namespace

void RegisterTopKOps(OpRegistry& r) {
  OpDef d;
  d.name = "TopK";
  d.units = "Vector, Scalar, MTE2, MTE3";
  d.task_type = device::TaskType::kAiVectorCore;
  d.dtypes = {v1::FLOAT16, v1::FLOAT32, v1::INT32, v1::INT64};
  d.min_inputs = d.max_inputs = 2;
  d.num_outputs = 2;
  d.attributes = {{"axis", AttrKind::kInt}, {"largest", AttrKind::kInt}, {"sorted", AttrKind::kInt}};
  d.shape_inputs = {1};
  d.infer = InferTopK;
  d.run = RunTopK;
  r.Register(std::move(d));
  OpDef h;
  h.name = "Hardmax";
  h.units = "Vector, MTE2, MTE3";
  h.task_type = device::TaskType::kAiVectorCore;
  h.dtypes = {v1::FLOAT16, v1::FLOAT32};
  h.attributes = {{"axis", AttrKind::kInt}};
  h.infer = InferHardmax;
  h.run = RunHardmax;
  r.Register(std::move(h));
}

}  // namespace npu::graph::ops
