// Tile (ONNX opset 13): the input repeated repeats[d] times along each dim d.
// repeats is a constant input (it decides the output shape); every output
// index reads input index o mod n (dim_map_copy.h), so each output row is
// whole-row bursts of the input row.
#include <vector>

#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/dim_map_copy.h"
#include "server/graph/ops/shape_args.h"

namespace npu::graph::ops {
namespace {

struct TilePlan {
  DimMap map;
};

absl::StatusOr<std::vector<TensorType>> InferTile(InferContext& c) {
  const TensorType& x = *c.inputs[0];
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  auto repeats = ConstantInts(c, 1);
  if (!repeats.ok()) return repeats.status();
  if (static_cast<int64_t>(repeats->size()) != rank) {
    return NodeError(c.node, InputLabel(c.node, 1), " has ", repeats->size(), " entries for input rank ", rank);
  }
  Shape out(x.shape);
  for (int64_t d = 0; d < rank; ++d) {
    if ((*repeats)[d] < 0) {
      return NodeError(c.node, InputLabel(c.node, 1), ": repeat ", (*repeats)[d], " of axis ", d, " is negative");
    }
    auto n = CheckedMul(x.shape[d], (*repeats)[d], InputLabel(c.node, 1));
    if (!n.ok()) return AtNode(c.node, n.status());
    out[d] = *n;
  }
  const TensorType type{x.dtype, out};
  if (auto n = CheckedElements(out, "the tiled output"); !n.ok()) return AtNode(c.node, n.status());
  if (auto b = CheckedBytes(type, c.max_tensor_bytes, "the tiled output"); !b.ok()) return AtNode(c.node, b.status());
  TilePlan plan{MakeDimMap(x.shape, out, [&](int64_t d, int64_t o) { return o % x.shape[d]; })};
  c.Prepare(std::move(plan));
  return std::vector<TensorType>{type};
}

absl::Status RunTile(RunContext& ctx) {
  CopyByDimMap(ctx, *ctx.inputs[0], ctx.outputs[0], ctx.State<TilePlan>().map, nullptr);
  return absl::OkStatus();
}

}  // namespace

void RegisterTileOp(OpRegistry& r) {
  OpDef d;
  d.name = "Tile";
  d.units = "MTE2, MTE3";
  d.task_type = device::TaskType::kAiVectorCore;
  d.dtypes = {v1::FLOAT16, v1::FLOAT32, v1::INT32, v1::INT8, v1::BOOL, v1::INT64};
  d.min_inputs = d.max_inputs = 2;
  d.shape_inputs = {1};
  d.infer = InferTile;
  d.run = RunTile;
  r.Register(std::move(d));
}

}  // namespace npu::graph::ops
