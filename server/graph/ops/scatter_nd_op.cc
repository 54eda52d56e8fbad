// ScatterND (ONNX opsets 13-18): a copy of data with slices replaced (or
// combined, reduction add/mul/max/min) by updates at the run-time indices
// (last dim k: an index into data's first k dims; negative counts from the
// end). Updates apply in index order, so a repeated index keeps the last
// update (reduction none) as ONNX's reference does. Every index is checked
// before anything is written.
#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/integer_math.h"
#include "server/graph/element_access.h"
#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/shape_args.h"
#include "server/graph/ops/strided_copy.h"

namespace npu::graph::ops {
namespace {

enum class Combine { kNone, kAdd, kMul, kMax, kMin };

absl::StatusOr<std::vector<TensorType>> InferScatterND(InferContext& c) {
  const TensorType& data = *c.inputs[0];
  const TensorType& idx = *c.inputs[1];
  const TensorType& upd = *c.inputs[2];
  if (idx.dtype != v1::INT64) {
    return NodeError(c.node, InputLabel(c.node, 1), ": indices must be INT64, got ", DataTypeName(idx.dtype));
  }
  if (upd.dtype != data.dtype) {
    return NodeError(c.node, InputLabel(c.node, 2), " is ", DataTypeName(upd.dtype), ", data is ",
                     DataTypeName(data.dtype));
  }
  if (idx.shape.empty()) return NodeError(c.node, InputLabel(c.node, 1), " is a scalar (needs rank >= 1)");
  const int64_t k = idx.shape.back();
  const int64_t rank = static_cast<int64_t>(data.shape.size());
  if (k < 1 || k > rank) {
    return NodeError(c.node, InputLabel(c.node, 1), ": its last dim ", k, " must be in [1, ", rank,
                     "] (the rank of data)");
  }
  Shape want(idx.shape.begin(), idx.shape.end() - 1);
  want.insert(want.end(), data.shape.begin() + k, data.shape.end());
  if (upd.shape != want) {
    return NodeError(c.node, InputLabel(c.node, 2), " is ", ShapeToString(upd.shape), "; indices ",
                     ShapeToString(idx.shape), " and data ", ShapeToString(data.shape), " need ", ShapeToString(want));
  }
  auto reduction = c.attrs.String("reduction", "none");
  if (!reduction.ok()) return reduction.status();
  if (*reduction != "none" && data.dtype == v1::BOOL) {
    return NodeError(c.node, "reduction ", Quoted(*reduction), " is not supported on BOOL");
  }
  return std::vector<TensorType>{data};
}

Combine CombineOf(const NodeAttributes& attrs) {
  const std::string r = attrs.String("reduction", "none").value_or("none");
  if (r == "add") return Combine::kAdd;
  if (r == "mul") return Combine::kMul;
  if (r == "max") return Combine::kMax;
  if (r == "min") return Combine::kMin;
  return Combine::kNone;
}

float Apply(Combine c, float a, float b) {
  switch (c) {
    case Combine::kAdd: return a + b;
    case Combine::kMul: return a * b;
    case Combine::kMax: return std::max(a, b);
    case Combine::kMin: return std::min(a, b);
    default: return b;
  }
}

absl::Status RunScatterND(RunContext& ctx) {
  const HostTensor& data = *ctx.inputs[0];
  const HostTensor& upd = *ctx.inputs[2];
  const HostTensor& out = ctx.outputs[0];
  const Shape& ds = data.type().shape;
  const std::vector<int64_t> idx = TensorInts(*ctx.inputs[1]);
  const int64_t k = ctx.inputs[1]->type().shape.back();
  const int64_t updates = k == 0 ? 0 : static_cast<int64_t>(idx.size()) / k;
  const auto strides = RowMajorStrides(ds);
  int64_t slice = 1;
  for (size_t d = static_cast<size_t>(k); d < ds.size(); ++d) slice *= ds[d];
  std::vector<int64_t> offsets(static_cast<size_t>(updates));
  for (int64_t u = 0; u < updates; ++u) {
    int64_t off = 0;
    for (int64_t j = 0; j < k; ++j) {
      int64_t i = idx[u * k + j];
      if (i < -ds[j] || i >= ds[j]) {
        return NodeError(ctx.node, InputLabel(ctx.node, 1), ": index ", i, " of update ", u, " is out of range for dim ",
                         j, " of size ", ds[j]);
      }
      off += (i < 0 ? i + ds[j] : i) * strides[j];
    }
    offsets[u] = off;
  }
  // The copy of data (MTE), then the updates in order on the Scalar/Vector units.
  CopyRegion(ctx, data, out, StridedRegion{ds, 0, 0, RowMajorStrides(ds), RowMajorStrides(ds)});
  const Combine combine = CombineOf(ctx.attrs);
  const size_t esize = ElementSize(data.type().dtype);
  device::TileWork w;
  for (int64_t u = 0; u < updates; ++u) {
    std::byte* dst = out.mutable_data() + offsets[u] * static_cast<int64_t>(esize);
    const std::byte* src = upd.data() + u * slice * static_cast<int64_t>(esize);
    if (combine == Combine::kNone) {
      std::memcpy(dst, src, static_cast<size_t>(slice) * esize);
    } else if (IsFloat(data.type().dtype)) {
      std::vector<float> a(static_cast<size_t>(slice)), b(static_cast<size_t>(slice));
      LoadAsFloat(out, offsets[u], 1, slice, a.data());
      LoadAsFloat(upd, u * slice, 1, slice, b.data());
      for (int64_t i = 0; i < slice; ++i) a[i] = Apply(combine, a[i], b[i]);
      w.overflow_elements += StoreFromFloat(out, offsets[u], slice, a.data(), ctx.preset.fp16_saturation);
      w.vector_instructions += 1;
    } else {
      std::vector<int64_t> a(static_cast<size_t>(slice)), b(static_cast<size_t>(slice));
      LoadAsInt64(out, offsets[u], 1, slice, a.data());
      LoadAsInt64(upd, u * slice, 1, slice, b.data());
      // Two's-complement wrapping, as ONNX's integer Add and Mul (a plain int64 sum is undefined past its range).
      const kernels::BinaryOp op = combine == Combine::kAdd   ? kernels::BinaryOp::kAdd
                                   : combine == Combine::kMul ? kernels::BinaryOp::kMul
                                   : combine == Combine::kMax ? kernels::BinaryOp::kMax
                                                              : kernels::BinaryOp::kMin;
      kernels::BinaryI64(op, a.data(), b.data(), a.data(), static_cast<size_t>(slice));
      StoreFromInt64(out, offsets[u], slice, a.data());
      w.vector_instructions += 1;
    }
    w.mte2_bytes += static_cast<uint64_t>(slice) * esize + static_cast<uint64_t>(k) * 8;
    w.mte3_bytes += static_cast<uint64_t>(slice) * esize;
    w.scalar_instructions += static_cast<uint64_t>(2 * k + 2);
    ++w.pipeline_steps;
  }
  // Updates may hit one slice twice: they run in order on one core.
  if (updates > 0) ctx.work.tiles.push_back(w);
  return absl::OkStatus();
}

}  // namespace

void RegisterScatterNDOp(OpRegistry& r) {
  OpDef d;
  d.name = "ScatterND";
  d.units = "MTE2, MTE3, Scalar, Vector (reductions)";
  d.task_type = device::TaskType::kAiVectorCore;
  d.dtypes = {v1::FLOAT16, v1::FLOAT32, v1::INT32, v1::INT8, v1::BOOL, v1::INT64};
  d.min_inputs = d.max_inputs = 3;
  d.attributes = {{"reduction", AttrKind::kString, {"none", "add", "mul", "max", "min"}}};
  d.infer = InferScatterND;
  d.run = RunScatterND;
  r.Register(std::move(d));
}

}  // namespace npu::graph::ops
