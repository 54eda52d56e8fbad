// Gather (ONNX): rows of `data` along `axis` picked by an index tensor known
// only at run time. Each index moves one contiguous block (MTE2 in, MTE3 out);
// the Scalar unit reads the index and computes the address.
#include <algorithm>
#include <cstring>
#include <vector>

#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/gather_shape.h"
#include "server/graph/ops/parallel_for.h"
#include "server/graph/ops/shape_args.h"

namespace npu::graph::ops {
namespace {

absl::StatusOr<std::vector<TensorType>> InferGather(InferContext& c) {
  auto out = GatheredShape(c, 0, 1);
  if (!out.ok()) return out.status();
  return std::vector<TensorType>{{c.inputs[0]->dtype, *out}};
}

absl::Status RunGather(RunContext& ctx) {
  const HostTensor& data = *ctx.inputs[0];
  const HostTensor& out = ctx.outputs[0];
  const Shape& ds = data.type().shape;
  const int64_t axis = NormalizeAxis(ctx.node, ctx.attrs.Int("axis", 0).value(), static_cast<int64_t>(ds.size())).value();
  const std::vector<int64_t> indices = TensorInts(*ctx.inputs[1]);
  const int64_t dim = ds[axis];
  if (auto s = CheckIndices(ctx.node, indices, dim, axis); !s.ok()) return s;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= ds[d];
  for (size_t d = axis + 1; d < ds.size(); ++d) inner *= ds[d];
  const size_t block = static_cast<size_t>(inner) * ElementSize(data.type().dtype);
  const int64_t n_idx = static_cast<int64_t>(indices.size());
  const int64_t blocks = outer * n_idx;
  if (blocks == 0 || block == 0) return absl::OkStatus();
  const int64_t tiles = std::min<int64_t>(blocks, ctx.preset.vector_unit_cores());
  ctx.work.tiles.assign(static_cast<size_t>(tiles), device::TileWork{});
  ParallelFor(tiles, 2 * blocks * inner, [&](int64_t t) {
    device::TileWork& w = ctx.work.tiles[static_cast<size_t>(t)];
    w.pipeline_steps = 0;
    for (int64_t b = blocks * t / tiles; b < blocks * (t + 1) / tiles; ++b) {
      const int64_t o = b / n_idx, j = b % n_idx;
      const int64_t row = indices[j] < 0 ? indices[j] + dim : indices[j];
      std::memcpy(out.mutable_data() + b * block, data.data() + (o * dim + row) * block, block);
      w.mte2_bytes += block;
      w.mte3_bytes += block;
      w.scalar_instructions += 3;  // load index, address, burst
      ++w.pipeline_steps;
    }
    w.pipeline_steps = std::max<uint64_t>(1, w.pipeline_steps);
  });
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Shape> GatheredShape(const InferContext& c, int data_input, int indices_input) {
  const TensorType& data = *c.inputs[data_input];
  const TensorType& idx = *c.inputs[indices_input];
  if (idx.dtype != v1::INT64 && idx.dtype != v1::INT32) {
    return NodeError(c.node, InputLabel(c.node, indices_input), ": indices must be INT64 or INT32, got ",
                     DataTypeName(idx.dtype));
  }
  auto attr = c.attrs.Int("axis", 0);
  if (!attr.ok()) return attr.status();
  const int64_t rank = static_cast<int64_t>(data.shape.size());
  if (rank == 0) return NodeError(c.node, InputLabel(c.node, data_input), " is a scalar");
  auto axis = NormalizeAxis(c.node, *attr, rank);
  if (!axis.ok()) return axis.status();
  Shape out(data.shape.begin(), data.shape.begin() + *axis);
  out.insert(out.end(), idx.shape.begin(), idx.shape.end());
  out.insert(out.end(), data.shape.begin() + *axis + 1, data.shape.end());
  return out;
}

void RegisterGatherOp(OpRegistry& r) {
  OpDef d;
  d.name = "Gather";
  d.units = "Scalar, MTE2, MTE3";
  d.task_type = device::TaskType::kAiVectorCore;
  d.dtypes = {v1::FLOAT16, v1::FLOAT32, v1::INT32, v1::INT8, v1::BOOL, v1::INT64};
  d.min_inputs = d.max_inputs = 2;
  d.attributes = {{"axis", AttrKind::kInt}};
  d.infer = InferGather;
  d.run = RunGather;
  r.Register(std::move(d));
}

}  // namespace npu::graph::ops
