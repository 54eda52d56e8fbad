// Softmax and LogSoftmax (opset 13: one axis, default -1) on the Vector unit:
// each row along the axis is one UB-resident block (max, exp, sum, scale).
// Rows along an inner axis are gathered with a stride first (MTE2 does strided
// loads), so every layout runs the same row kernel.
#include <algorithm>
#include <vector>

#include "kernels/vector_rows.h"
#include "server/device/vector_passes.h"
#include "server/graph/element_access.h"
#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/parallel_for.h"
#include "server/graph/ops/shape_args.h"
#include "server/graph/vector_tiling.h"

namespace npu::graph::ops {
namespace {

absl::StatusOr<std::vector<TensorType>> InferSoftmax(InferContext& c) {
  if (auto s = c.attrs.CheckKnown({"axis"}); !s.ok()) return s;
  const TensorType& x = *c.inputs[0];
  if (!IsFloat(x.dtype)) {
    return NodeError(c.node, InputLabel(c.node, 0), ": dtype ", DataTypeName(x.dtype),
                     " is not supported (FLOAT16, FLOAT32)");
  }
  auto axis = c.attrs.Int("axis", -1);
  if (!axis.ok()) return axis.status();
  if (auto a = NormalizeAxis(c.node, *axis, static_cast<int64_t>(x.shape.size())); !a.ok()) return a.status();
  return std::vector<TensorType>{x};
}

absl::Status RunSoftmax(RunContext& ctx, bool log) {
  const HostTensor& x = *ctx.inputs[0];
  const HostTensor& out = ctx.outputs[0];
  const Shape& s = x.type().shape;
  const int64_t rank = static_cast<int64_t>(s.size());
  const int64_t axis = rank == 0 ? 0 : *NormalizeAxis(ctx.node, ctx.attrs.Int("axis", -1).value(), rank);
  const int64_t len = rank == 0 ? 1 : s[axis];
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < rank; ++d) inner *= s[d];
  const int64_t rows = len == 0 ? 0 : x.type().elements() / len;
  if (rows == 0) return absl::OkStatus();
  const int64_t tiles = std::min<int64_t>(rows, ctx.preset.vector_unit_cores());
  ctx.work.tiles.assign(static_cast<size_t>(tiles), device::TileWork{});
  const int64_t in_bytes = static_cast<int64_t>(ElementSize(x.type().dtype));
  const bool saturate = ctx.preset.fp16_saturation;
  const bool direct = inner == 1 && x.type().dtype == v1::FLOAT32;
  ParallelFor(tiles, [&](int64_t t) {
    device::TileWork& w = ctx.work.tiles[static_cast<size_t>(t)];
    w.pipeline_steps = 0;
    thread_local std::vector<float> row, res;
    row.resize(static_cast<size_t>(len));
    res.resize(static_cast<size_t>(len));
    for (int64_t r = rows * t / tiles; r < rows * (t + 1) / tiles; ++r) {
      const int64_t base = (r / inner) * len * inner + r % inner;
      if (direct) {
        kernels::SoftmaxRowF32(x.as<float>() + base, out.mutable_as<float>() + base, len, log);
      } else if (inner == 1) {
        LoadAsFloat(x, base, 1, len, row.data());
        kernels::SoftmaxRowF32(row.data(), res.data(), len, log);
        StoreFromFloat(out, base, len, res.data(), saturate);
      } else {
        for (int64_t i = 0; i < len; ++i) LoadAsFloat(x, base + i * inner, 1, 1, &row[i]);
        kernels::SoftmaxRowF32(row.data(), res.data(), len, log);
        for (int64_t i = 0; i < len; ++i) StoreFromFloat(out, base + i * inner, 1, &res[i], saturate);
      }
      // max, subtract + exp, sum, scale (vector_passes.h), in fp32 lanes.
      w += VectorChunkWork(len, len * in_bytes, len * in_bytes, 4, device::VectorPasses(device::VectorKernel::kSoftmaxRow));
    }
    w.pipeline_steps = std::max<uint64_t>(1, w.pipeline_steps);
  });
  return absl::OkStatus();
}

OpDef SoftmaxDef(std::string name, bool log) {
  OpDef d;
  d.name = std::move(name);
  d.units = "Vector, MTE2, MTE3";
  d.task_type = device::TaskType::kAiVectorCore;
  d.dtypes = {v1::FLOAT16, v1::FLOAT32};
  d.infer = InferSoftmax;
  d.run = [log](RunContext& c) { return RunSoftmax(c, log); };
  return d;
}

}  // namespace

void RegisterSoftmaxOps(OpRegistry& r) {
  r.Register(SoftmaxDef("Softmax", false));
  r.Register(SoftmaxDef("LogSoftmax", true));
}

}  // namespace npu::graph::ops
