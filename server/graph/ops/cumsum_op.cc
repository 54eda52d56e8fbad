// CumSum (ONNX opset 14): running sums along a constant axis, exclusive and
// reverse as attributes. Floats accumulate in double and round each output
// once (torch.cumsum's CPU order), integers exactly in int64 (wrapping). Each
// line along the axis is independent: the tiles split the lines.
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

struct CumSumPlan {
  int64_t outer = 1, len = 1, inner = 1;
  bool exclusive = false, reverse = false;
};

absl::StatusOr<std::vector<TensorType>> InferCumSum(InferContext& c) {
  const TensorType& x = *c.inputs[0];
  if (!IsFloat(x.dtype) && x.dtype != v1::INT32 && x.dtype != v1::INT64) {
    return NodeError(c.node, InputLabel(c.node, 0), ": dtype ", DataTypeName(x.dtype),
                     " is not supported (FLOAT16, FLOAT32, INT32, INT64)");
  }
  auto axis_value = ConstantInts(c, 1);
  if (!axis_value.ok()) return axis_value.status();
  if (axis_value->size() != 1) {
    return NodeError(c.node, InputLabel(c.node, 1), ": axis must hold one value, got ", axis_value->size());
  }
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  auto axis = NormalizeAxis(c.node, (*axis_value)[0], rank, InputLabel(c.node, 1));
  if (!axis.ok()) return axis.status();
  auto exclusive = c.attrs.Int("exclusive", 0);
  auto reverse = c.attrs.Int("reverse", 0);
  if (!exclusive.ok()) return exclusive.status();
  if (!reverse.ok()) return reverse.status();
  CumSumPlan p;
  for (int64_t d = 0; d < rank; ++d) {
    if (d < *axis) p.outer *= x.shape[d];
    if (d > *axis) p.inner *= x.shape[d];
  }
  p.len = x.shape[*axis];
  p.exclusive = *exclusive != 0;
  p.reverse = *reverse != 0;
  c.Prepare(p);
  return std::vector<TensorType>{x};
}

absl::Status RunCumSum(RunContext& ctx) {
  const CumSumPlan& p = ctx.State<CumSumPlan>();
  const HostTensor& x = *ctx.inputs[0];
  const HostTensor& out = ctx.outputs[0];
  const bool ints = !IsFloat(x.type().dtype);
  const int64_t esize = static_cast<int64_t>(ElementSize(x.type().dtype));
  const bool saturate = ctx.preset.fp16_saturation;
  // One unit: a block of `inner` lines side by side (contiguous in memory).
  ForEachUnitTile(ctx, p.outer, [&](device::TileWork& w, int64_t o0, int64_t o1) {
    thread_local std::vector<double> acc, row;
    thread_local std::vector<int64_t> iacc, irow;
    const size_t n = static_cast<size_t>(p.inner);
    for (int64_t o = o0; o < o1; ++o) {
      if (ints) {
        iacc.assign(n, 0), irow.resize(n);
      } else {
        acc.assign(n, 0.0), row.resize(n);
      }
      for (int64_t step = 0; step < p.len; ++step) {
        const int64_t k = p.reverse ? p.len - 1 - step : step;
        const int64_t at = (o * p.len + k) * p.inner;
        if (ints) {
          LoadAsInt64(x, at, 1, p.inner, irow.data());
          for (size_t i = 0; i < n; ++i) {
            const int64_t v = irow[i];
            irow[i] = p.exclusive ? iacc[i] : static_cast<int64_t>(static_cast<uint64_t>(iacc[i]) + v);
            iacc[i] = static_cast<int64_t>(static_cast<uint64_t>(iacc[i]) + static_cast<uint64_t>(v));
          }
          StoreFromInt64(out, at, p.inner, irow.data());
        } else {
          thread_local std::vector<float> f;
          f.resize(n);
          LoadAsFloat(x, at, 1, p.inner, f.data());
          for (size_t i = 0; i < n; ++i) {
            const double before = acc[i];
            acc[i] += f[i];
            f[i] = static_cast<float>(p.exclusive ? before : acc[i]);
          }
          w.overflow_elements += StoreFromFloat(out, at, p.inner, f.data(), saturate);
        }
        w += VectorChunkWork(p.inner, p.inner * esize, p.inner * esize, ints ? esize : 8,
                             device::VectorPasses(device::VectorKernel::kAdd));
      }
    }
  });
  return absl::OkStatus();
}

}  // namespace

void RegisterCumSumOp(OpRegistry& r) {
  OpDef d;
  d.name = "CumSum";
  d.units = "Vector, MTE2, MTE3";
  d.task_type = device::TaskType::kAiVectorCore;
  d.dtypes = {v1::FLOAT16, v1::FLOAT32, v1::INT32, v1::INT64};
  d.min_inputs = d.max_inputs = 2;
  d.attributes = {{"exclusive", AttrKind::kInt}, {"reverse", AttrKind::kInt}};
  d.shape_inputs = {1};
  d.infer = InferCumSum;
  d.run = RunCumSum;
  r.Register(std::move(d));
}

}  // namespace npu::graph::ops
