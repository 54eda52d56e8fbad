// Vector elementwise ops with NumPy broadcasting. Each tile of output elements
// runs in UB-sized chunks: MTE2 loads (widening fp16 to fp32), one Vector pass
// per arithmetic step, MTE3 stores (rounding once to the output type).
#include <vector>

#include "kernels/vector_math.h"
#include "server/graph/broadcast.h"
#include "server/graph/element_access.h"
#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/vector_tiling.h"

namespace npu::graph::ops {
namespace {

using kernels::BinaryOp;
using kernels::UnaryOp;

absl::StatusOr<std::vector<TensorType>> InferBinary(InferContext& c) {
  if (auto s = c.attrs.CheckKnown({}); !s.ok()) return s;
  const TensorType& a = *c.inputs[0];
  const TensorType& b = *c.inputs[1];
  if (a.dtype != b.dtype) {
    return NodeError(c.node, "inputs \"", c.node.inputs(0), "\" (", DataTypeName(a.dtype), ") and \"",
                     c.node.inputs(1), "\" (", DataTypeName(b.dtype), ") have different dtypes");
  }
  if (a.dtype != v1::FLOAT16 && a.dtype != v1::FLOAT32 && a.dtype != v1::INT32) {
    return NodeError(c.node, "input \"", c.node.inputs(0), "\": dtype ", DataTypeName(a.dtype),
                     " is not supported (FLOAT16, FLOAT32, INT32)");
  }
  auto shape = BroadcastShapes(a.shape, b.shape);
  if (!shape.ok()) {
    return NodeError(c.node, "inputs \"", c.node.inputs(0), "\" and \"", c.node.inputs(1), "\": ",
                     shape.status().message());
  }
  return std::vector<TensorType>{{a.dtype, *shape}};
}

absl::StatusOr<std::vector<TensorType>> InferUnaryFloat(InferContext& c) {
  if (auto s = c.attrs.CheckKnown({}); !s.ok()) return s;
  const TensorType& x = *c.inputs[0];
  if (!IsFloat(x.dtype)) {
    return NodeError(c.node, "input \"", c.node.inputs(0), "\": dtype ", DataTypeName(x.dtype),
                     " is not supported (FLOAT16, FLOAT32)");
  }
  return std::vector<TensorType>{x};
}

// Runs `compute(chunk_index_start, len, scratch...)` over every chunk of every
// tile, in parallel over tiles, and records each tile's counted work.
template <typename ChunkFn>
void ForEachChunk(RunContext& ctx, int64_t operands, int64_t passes, ChunkFn&& chunk_fn) {
  const HostTensor& out = ctx.outputs[0];
  const int64_t n = out.type().elements();
  const int64_t lane = 4;  // fp32 (or int32) lanes in the Vector unit
  const VectorTiling tiling = PlanVectorTiles(n, lane * operands, ctx.preset);
  ctx.work.tiles.assign(static_cast<size_t>(tiling.tiles), device::TileWork{});
  ctx.work.tiles.shrink_to_fit();
  int64_t in_elem_bytes = 0;
  for (const HostTensor* in : ctx.inputs) in_elem_bytes += static_cast<int64_t>(ElementSize(in->type().dtype));
  const int64_t out_elem_bytes = static_cast<int64_t>(ElementSize(out.type().dtype));
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < tiling.tiles; ++t) {
    const int64_t begin = tiling.TileBegin(t);
    const int64_t end = std::min(n, begin + tiling.per_tile);
    device::TileWork& work = ctx.work.tiles[static_cast<size_t>(t)];
    work.pipeline_steps = 0;
    for (int64_t s = begin; s < end; s += tiling.chunk) {
      const int64_t len = std::min(tiling.chunk, end - s);
      chunk_fn(s, len);
      work += VectorChunkWork(len, len * in_elem_bytes, len * out_elem_bytes, lane, passes);
    }
  }
}

absl::Status RunBinary(RunContext& ctx, BinaryOp op) {
  const HostTensor& a = *ctx.inputs[0];
  const HostTensor& b = *ctx.inputs[1];
  const HostTensor& out = ctx.outputs[0];
  const BroadcastMap ma(a.type().shape, out.type().shape), mb(b.type().shape, out.type().shape);
  const bool saturate = ctx.preset.fp16_saturation;
  if (out.type().dtype == v1::INT32) {
    ForEachChunk(ctx, 3, 1, [&](int64_t s, int64_t len) {
      thread_local std::vector<int32_t> xa, xb, xo;
      xa.resize(len), xb.resize(len), xo.resize(len);
      GatherBroadcast(a, ma, s, len, xa.data());
      GatherBroadcast(b, mb, s, len, xb.data());
      kernels::BinaryI32(op, xa.data(), xb.data(), xo.data(), static_cast<size_t>(len));
      StoreFromInt32(out, s, len, xo.data());
    });
    return absl::OkStatus();
  }
  ForEachChunk(ctx, 3, 1, [&](int64_t s, int64_t len) {
    thread_local std::vector<float> xa, xb, xo;
    xa.resize(len), xb.resize(len), xo.resize(len);
    GatherBroadcast(a, ma, s, len, xa.data());
    GatherBroadcast(b, mb, s, len, xb.data());
    kernels::BinaryF32(op, xa.data(), xb.data(), xo.data(), static_cast<size_t>(len));
    StoreFromFloat(out, s, len, xo.data(), saturate);
  });
  return absl::OkStatus();
}

absl::Status RunUnary(RunContext& ctx, UnaryOp op) {
  const HostTensor& x = *ctx.inputs[0];
  const HostTensor& out = ctx.outputs[0];
  const bool saturate = ctx.preset.fp16_saturation;
  ForEachChunk(ctx, 2, 1, [&](int64_t s, int64_t len) {
    thread_local std::vector<float> xi, xo;
    xi.resize(len), xo.resize(len);
    LoadAsFloat(x, s, 1, len, xi.data());
    kernels::UnaryF32(op, xi.data(), xo.data(), static_cast<size_t>(len));
    StoreFromFloat(out, s, len, xo.data(), saturate);
  });
  return absl::OkStatus();
}

OpDef BinaryDef(std::string name, BinaryOp op) {
  OpDef d;
  d.name = std::move(name);
  d.units = "Vector, MTE2, MTE3";
  d.task_type = device::TaskType::kAiVectorCore;
  d.dtypes = {v1::FLOAT16, v1::FLOAT32, v1::INT32};
  d.min_inputs = d.max_inputs = 2;
  d.infer = InferBinary;
  d.run = [op](RunContext& c) { return RunBinary(c, op); };
  return d;
}

OpDef UnaryDef(std::string name, UnaryOp op) {
  OpDef d;
  d.name = std::move(name);
  d.units = "Vector, MTE2, MTE3";
  d.task_type = device::TaskType::kAiVectorCore;
  d.dtypes = {v1::FLOAT16, v1::FLOAT32};
  d.infer = InferUnaryFloat;
  d.run = [op](RunContext& c) { return RunUnary(c, op); };
  return d;
}

}  // namespace

void RegisterElementwiseOps(OpRegistry& r) {
  r.Register(BinaryDef("Add", BinaryOp::kAdd));
  r.Register(BinaryDef("Sub", BinaryOp::kSub));
  r.Register(BinaryDef("Mul", BinaryOp::kMul));
  r.Register(BinaryDef("Div", BinaryOp::kDiv));
  r.Register(UnaryDef("Relu", UnaryOp::kRelu));
}

}  // namespace npu::graph::ops
