// GatherGrad(dY, indices, X; axis) -> dX: the gradient of Gather (an
// embedding lookup's), X's shape filled with zeros and every gathered block of
// dY added back where it came from. Repeated indices accumulate in fp32 in
// index order; tiles split the block's columns, so the order never depends on
// the tiling. X gives only the shape and type. Scalar unit: index reads and
// addresses; Vector: the adds; MTEs: the blocks.
#include <algorithm>
#include <vector>

#include "server/device/vector_passes.h"
#include "server/graph/element_access.h"
#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/gather_shape.h"
#include "server/graph/ops/row_tiles.h"
#include "server/graph/ops/shape_args.h"
#include "server/graph/ops/training_op_def.h"
#include "server/graph/vector_tiling.h"

namespace npu::graph::ops {
namespace {

absl::StatusOr<std::vector<TensorType>> InferGatherGrad(InferContext& c) {
  if (auto s = CheckFloatInputs(c, {0}); !s.ok()) return s;
  const TensorType& dy = *c.inputs[0];
  const TensorType& x = *c.inputs[2];
  auto out = GatheredShape(c, 2, 1);
  if (!out.ok()) return out.status();
  const Shape& gathered = *out;
  if (dy.shape != gathered) {
    return NodeError(c.node, "the gradient ", ToString(dy), " does not match Gather's output ",
                     ShapeToString(gathered));
  }
  return std::vector<TensorType>{{dy.dtype, x.shape}};
}

absl::Status RunGatherGrad(RunContext& ctx) {
  const HostTensor& dy = *ctx.inputs[0];
  const HostTensor& out = ctx.outputs[0];
  const Shape& xs = out.type().shape;
  const int64_t axis = *NormalizeAxis(ctx.node, ctx.attrs.Int("axis", 0).value(), static_cast<int64_t>(xs.size()));
  const std::vector<int64_t> indices = TensorInts(*ctx.inputs[1]);
  const int64_t dim = xs[axis];
  if (auto s = CheckIndices(ctx.node, indices, dim, axis); !s.ok()) return s;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= xs[d];
  for (size_t d = axis + 1; d < xs.size(); ++d) inner *= xs[d];
  const int64_t n_idx = static_cast<int64_t>(indices.size());
  const bool saturate = ctx.preset.fp16_saturation;
  const int64_t bytes = static_cast<int64_t>(ElementSize(dy.type().dtype));
  std::vector<float> acc(static_cast<size_t>(out.type().elements()), 0.0f);
  ForEachRowTile(ctx, inner, [&](int64_t begin, int64_t end, device::TileWork& w) {
    const int64_t cols = end - begin;
    thread_local std::vector<float> row;
    row.resize(static_cast<size_t>(cols));
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < n_idx; ++j) {
        const int64_t r = indices[j] < 0 ? indices[j] + dim : indices[j];
        LoadAsFloat(dy, (o * n_idx + j) * inner + begin, 1, cols, row.data());
        float* dst = acc.data() + (o * dim + r) * inner + begin;
        for (int64_t i = 0; i < cols; ++i) dst[i] += row[i];
        w += VectorChunkWork(cols, cols * bytes, 0, 4, device::VectorPasses(device::VectorKernel::kAccumulate));
        w.scalar_instructions += 3;  // load index, address, burst
      }
    }
  });
  if (ctx.work.tiles.empty()) ctx.work.tiles.emplace_back();
  device::TileWork& w = ctx.work.tiles[0];
  w.overflow_elements += StoreFromFloat(out, 0, out.type().elements(), acc.data(), saturate);
  w.mte3_bytes += out.bytes();
  return absl::OkStatus();
}

}  // namespace

void RegisterGatherGradOp(OpRegistry& r) {
  r.Register(WithAttributes(
      TrainingOpDef("GatherGrad", 3, 3, 1, InferGatherGrad, RunGatherGrad, "Scalar, Vector, MTE2, MTE3"),
      {{"axis", AttrKind::kInt}}));
}

}  // namespace npu::graph::ops
