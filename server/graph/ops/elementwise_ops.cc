// Vector elementwise binary ops with NumPy broadcasting (Add, Sub, Mul, Div,
// Pow, Max, Min, Equal, Less, Greater) and Where. Each tile of output elements
// runs in UB-sized chunks: MTE2 loads (widening fp16 to fp32), the Vector
// passes of its kernel (server/device/vector_passes.h), MTE3 stores (rounding
// once to the output type).
#include <vector>

#include "kernels/vector_math.h"
#include "server/device/vector_passes.h"
#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/vector_chunks.h"

namespace npu::graph::ops {
namespace {

using kernels::BinaryOp;

bool IsNumeric(DataType t) { return t == v1::FLOAT16 || t == v1::FLOAT32 || t == v1::INT32; }

absl::Status CheckNumeric(const InferContext& c, int i) {
  if (IsNumeric(c.inputs[i]->dtype)) return absl::OkStatus();
  return NodeError(c.node, InputLabel(c.node, i), ": dtype ", DataTypeName(c.inputs[i]->dtype),
                   " is not supported (FLOAT16, FLOAT32, INT32)");
}

absl::StatusOr<Shape> BroadcastInputs(const InferContext& c, int first, int count) {
  Shape shape = c.inputs[first]->shape;
  for (int i = first + 1; i < first + count; ++i) {
    auto s = BroadcastShapes(shape, c.inputs[i]->shape);
    if (!s.ok()) return NodeError(c.node, InputLabel(c.node, i), ": ", s.status().message());
    shape = *s;
  }
  return shape;
}

absl::StatusOr<std::vector<TensorType>> InferBinary(InferContext& c, BinaryOp op) {
  if (auto s = c.attrs.CheckKnown({}); !s.ok()) return s;
  for (int i = 0; i < 2; ++i) {
    if (auto s = CheckNumeric(c, i); !s.ok()) return s;
  }
  const TensorType& a = *c.inputs[0];
  const TensorType& b = *c.inputs[1];
  // Pow may raise to an exponent of another type (x ** 2 exported with an int
  // or fp32 constant); everything else wants equal types, as ONNX does.
  if (a.dtype != b.dtype && op != BinaryOp::kPow) {
    return NodeError(c.node, InputLabel(c.node, 0), " (", DataTypeName(a.dtype), ") and ", InputLabel(c.node, 1), " (",
                     DataTypeName(b.dtype), ") have different dtypes");
  }
  auto shape = BroadcastInputs(c, 0, 2);
  if (!shape.ok()) return shape.status();
  return std::vector<TensorType>{{kernels::IsComparison(op) ? v1::BOOL : a.dtype, *shape}};
}

absl::Status RunBinary(RunContext& ctx, BinaryOp op) {
  const HostTensor& a = *ctx.inputs[0];
  const HostTensor& b = *ctx.inputs[1];
  const HostTensor& out = ctx.outputs[0];
  const BroadcastMap ma(a.type().shape, out.type().shape), mb(b.type().shape, out.type().shape);
  const bool saturate = ctx.preset.fp16_saturation;
  const int64_t passes = device::VectorPasses(device::KernelOf(op));
  if (a.type().dtype == v1::INT32) {
    ForEachChunk(ctx, 3, passes, [&](int64_t s, int64_t len) {
      thread_local std::vector<int32_t> xa, xb, xo;
      xa.resize(len), xb.resize(len), xo.resize(len);
      GatherBroadcast(a, ma, s, len, xa.data());
      GatherBroadcast(b, mb, s, len, xb.data());
      kernels::BinaryI32(op, xa.data(), xb.data(), xo.data(), static_cast<size_t>(len));
      StoreFromInt32(out, s, len, xo.data());
    });
    return absl::OkStatus();
  }
  ForEachChunk(ctx, 3, passes, [&](int64_t s, int64_t len) {
    thread_local std::vector<float> xa, xb, xo;
    const float* pa = ChunkAsFloat(a, ma, s, len, xa);
    const float* pb = ChunkAsFloat(b, mb, s, len, xb);
    float* po = OutChunk(out, s, len, xo);
    kernels::BinaryF32(op, pa, pb, po, static_cast<size_t>(len));
    FinishChunk(out, s, len, po, saturate);
  });
  return absl::OkStatus();
}

absl::StatusOr<std::vector<TensorType>> InferWhere(InferContext& c) {
  if (auto s = c.attrs.CheckKnown({}); !s.ok()) return s;
  if (c.inputs[0]->dtype != v1::BOOL) {
    return NodeError(c.node, InputLabel(c.node, 0), ": condition must be BOOL, got ",
                     DataTypeName(c.inputs[0]->dtype));
  }
  for (int i = 1; i < 3; ++i) {
    if (auto s = CheckNumeric(c, i); !s.ok()) return s;
  }
  if (c.inputs[1]->dtype != c.inputs[2]->dtype) {
    return NodeError(c.node, InputLabel(c.node, 1), " and ", InputLabel(c.node, 2), " have different dtypes");
  }
  auto shape = BroadcastInputs(c, 0, 3);
  if (!shape.ok()) return shape.status();
  return std::vector<TensorType>{{c.inputs[1]->dtype, *shape}};
}

absl::Status RunWhere(RunContext& ctx) {
  const HostTensor& cond = *ctx.inputs[0];
  const HostTensor& x = *ctx.inputs[1];
  const HostTensor& y = *ctx.inputs[2];
  const HostTensor& out = ctx.outputs[0];
  const Shape& os = out.type().shape;
  const BroadcastMap mc(cond.type().shape, os), mx(x.type().shape, os), my(y.type().shape, os);
  const bool saturate = ctx.preset.fp16_saturation;
  if (out.type().dtype == v1::INT32) {
    ForEachChunk(ctx, 4, device::VectorPasses(device::VectorKernel::kSelect), [&](int64_t s, int64_t len) {
      thread_local std::vector<int32_t> xc, xx, xy;
      xc.resize(len), xx.resize(len), xy.resize(len);
      GatherBroadcast(cond, mc, s, len, xc.data());
      GatherBroadcast(x, mx, s, len, xx.data());
      GatherBroadcast(y, my, s, len, xy.data());
      for (int64_t i = 0; i < len; ++i) xx[i] = xc[i] ? xx[i] : xy[i];
      StoreFromInt32(out, s, len, xx.data());
    });
    return absl::OkStatus();
  }
  ForEachChunk(ctx, 4, device::VectorPasses(device::VectorKernel::kSelect), [&](int64_t s, int64_t len) {
    thread_local std::vector<float> xc, xx, xy, xo;
    const float* pc = ChunkAsFloat(cond, mc, s, len, xc);
    const float* px = ChunkAsFloat(x, mx, s, len, xx);
    const float* py = ChunkAsFloat(y, my, s, len, xy);
    float* po = OutChunk(out, s, len, xo);
    kernels::SelectF32(pc, px, py, po, static_cast<size_t>(len));
    FinishChunk(out, s, len, po, saturate);
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
  d.infer = [op](InferContext& c) { return InferBinary(c, op); };
  d.run = [op](RunContext& c) { return RunBinary(c, op); };
  return d;
}

}  // namespace

void RegisterElementwiseOps(OpRegistry& r) {
  r.Register(BinaryDef("Add", BinaryOp::kAdd));
  r.Register(BinaryDef("Sub", BinaryOp::kSub));
  r.Register(BinaryDef("Mul", BinaryOp::kMul));
  r.Register(BinaryDef("Div", BinaryOp::kDiv));
  r.Register(BinaryDef("Pow", BinaryOp::kPow));
  r.Register(BinaryDef("Max", BinaryOp::kMax));
  r.Register(BinaryDef("Min", BinaryOp::kMin));
  r.Register(BinaryDef("Equal", BinaryOp::kEqual));
  r.Register(BinaryDef("Less", BinaryOp::kLess));
  r.Register(BinaryDef("Greater", BinaryOp::kGreater));
  OpDef where;
  where.name = "Where";
  where.units = "Vector, MTE2, MTE3";
  where.task_type = device::TaskType::kAiVectorCore;
  where.dtypes = {v1::FLOAT16, v1::FLOAT32, v1::INT32};
  where.min_inputs = where.max_inputs = 3;
  where.infer = InferWhere;
  where.run = RunWhere;
  r.Register(std::move(where));
}

}  // namespace npu::graph::ops
