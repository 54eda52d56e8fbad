// Gradients of Softmax and LogSoftmax along one axis (opset 13), on the Vector
// unit, row by row in fp32 like the forward ops:
//   SoftmaxGrad(dY, Y):    dX = Y * (dY - sum(dY * Y))
//   LogSoftmaxGrad(dY, Y): dX = dY - exp(Y) * sum(dY)
// Rows along an inner axis are gathered with a stride, as the forward does.
#include <cmath>
#include <vector>

#include "kernels/fp16.h"
#include "server/device/vector_passes.h"
#include "server/graph/element_access.h"
#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/row_tiles.h"
#include "server/graph/ops/shape_args.h"
#include "server/graph/ops/training_op_def.h"
#include "server/graph/vector_tiling.h"

namespace npu::graph::ops {
namespace {

absl::StatusOr<std::vector<TensorType>> InferSoftmaxGrad(InferContext& c) {
  if (auto s = CheckFloatInputs(c); !s.ok()) return s;
  if (c.inputs[0]->shape != c.inputs[1]->shape) {
    return NodeError(c.node, "the gradient ", ToString(*c.inputs[0]), " and the output ", ToString(*c.inputs[1]),
                     " differ in shape");
  }
  auto axis = c.attrs.Int("axis", -1);
  if (!axis.ok()) return axis.status();
  if (auto a = NormalizeAxis(c.node, *axis, static_cast<int64_t>(c.inputs[0]->shape.size())); !a.ok()) {
    return a.status();
  }
  return std::vector<TensorType>{*c.inputs[0]};
}

// Elements base, base + inner, ... (len of them) of `t` as fp32.
void LoadRow(const HostTensor& t, int64_t base, int64_t len, int64_t inner, float* dst) {
  if (inner == 1) return LoadAsFloat(t, base, 1, len, dst);
  for (int64_t i = 0; i < len; ++i) LoadAsFloat(t, base + i * inner, 1, 1, dst + i);
}

absl::Status RunSoftmaxGrad(RunContext& ctx, bool log) {
  const HostTensor& dy = *ctx.inputs[0];
  const HostTensor& y = *ctx.inputs[1];
  const HostTensor& out = ctx.outputs[0];
  const Shape& s = dy.type().shape;
  const int64_t rank = static_cast<int64_t>(s.size());
  const int64_t axis = rank == 0 ? 0 : *NormalizeAxis(ctx.node, ctx.attrs.Int("axis", -1).value(), rank);
  const AxisRows along = RowsAlong(s, axis);
  const int64_t len = along.len, inner = along.inner, rows = along.rows;
  const int64_t bytes = static_cast<int64_t>(ElementSize(dy.type().dtype) + ElementSize(y.type().dtype));
  const int64_t out_bytes = static_cast<int64_t>(ElementSize(out.type().dtype));
  const bool saturate = ctx.preset.fp16_saturation;
  ForEachRowTile(ctx, rows, [&](int64_t begin, int64_t end, device::TileWork& w) {
    thread_local std::vector<float> g, v, res;
    g.resize(static_cast<size_t>(len));
    v.resize(static_cast<size_t>(len));
    res.resize(static_cast<size_t>(len));
    for (int64_t r = begin; r < end; ++r) {
      const int64_t base = along.Base(r);
      LoadRow(dy, base, len, inner, g.data());
      LoadRow(y, base, len, inner, v.data());
      float sum = 0.0f;  // index order: the result does not depend on tiling
      if (log) {
        for (int64_t i = 0; i < len; ++i) sum += g[i];
        for (int64_t i = 0; i < len; ++i) res[i] = g[i] - std::exp(v[i]) * sum;
      } else {
        for (int64_t i = 0; i < len; ++i) sum += g[i] * v[i];
        for (int64_t i = 0; i < len; ++i) res[i] = v[i] * (g[i] - sum);
      }
      if (inner == 1) {
        w.overflow_elements += StoreFromFloat(out, base, len, res.data(), saturate);
      } else {
        for (int64_t i = 0; i < len; ++i) w.overflow_elements += StoreFromFloat(out, base + i * inner, 1, &res[i], saturate);
      }
      w += VectorChunkWork(len, len * bytes, len * out_bytes, 4,
                           device::VectorPasses(device::VectorKernel::kSoftmaxGradRow) * !log + device::VectorPasses(device::VectorKernel::kLogSoftmaxGradRow) * log);
    }
  });
  return absl::OkStatus();
}

}  // namespace

void RegisterSoftmaxGradOps(OpRegistry& r) {
  for (bool log : {false, true}) {
    r.Register(WithAttributes(TrainingOpDef(log ? "LogSoftmaxGrad" : "SoftmaxGrad", 2, 2, 1, InferSoftmaxGrad,
                                            [log](RunContext& c) { return RunSoftmaxGrad(c, log); }),
                              {{"axis", AttrKind::kInt}}));
  }
}

}  // namespace npu::graph::ops
