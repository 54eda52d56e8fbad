// Vector elementwise binary ops with NumPy broadcasting (Add, Sub, Mul, Div,
// Pow, PRelu, Mod) and Where (variadic Max/Min/Sum/Mean: variadic_ops.cc).
// PRelu is torch's x > 0 ? x : slope x, its slope broadcast to x's shape; Mod
// with fmod = 1 is C's fmod (torch.fmod), with fmod = 0 the remainder with the
// divisor's sign (torch.remainder; ONNX asks fmod = 1 for floats, both run). Each tile of output elements runs in UB-sized
// chunks through the Vector kernels (kernels/vector_kernels.h): fp16 widened on
// load, fp32 arithmetic for the Vector passes of its kernel
// (server/device/vector_passes.h), one rounding on store, overflows counted.
// Integer tensors compute in int32 (INT32) or int64 (INT64: two 32-bit steps
// per pass, the Vector unit's integer ALU being 32 bits wide); comparisons are
// in compare_ops.cc.
#include <vector>

#include "kernels/integer_math.h"
#include "kernels/vector_kernels.h"
#include "kernels/vector_math.h"
#include "server/device/vector_passes.h"
#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/shape_args.h"
#include "server/graph/ops/vector_chunks.h"

namespace npu::graph::ops {
namespace {

using kernels::BinaryOp;

bool IsNumeric(DataType t) { return t == v1::FLOAT16 || t == v1::FLOAT32 || t == v1::INT32 || t == v1::INT64; }

absl::Status CheckNumeric(const InferContext& c, int i) {
  if (IsNumeric(c.inputs[i]->dtype)) return absl::OkStatus();
  return NodeError(c.node, InputLabel(c.node, i), ": dtype ", DataTypeName(c.inputs[i]->dtype),
                   " is not supported (FLOAT16, FLOAT32, INT32, INT64)");
}

// The integer path: T is the compute type (int32_t or int64_t), `kernel` the
// arithmetic on one chunk; int64 takes two 32-bit steps per pass.
template <typename T, typename Kernel>
void RunIntegerBinary(RunContext& ctx, const BroadcastMap& ma, const BroadcastMap& mb, int64_t passes,
                      Kernel kernel) {
  const HostTensor& a = *ctx.inputs[0];
  const HostTensor& b = *ctx.inputs[1];
  const HostTensor& out = ctx.outputs[0];
  ForEachChunk(ctx, 3, passes * static_cast<int64_t>(sizeof(T) / 4), [&](int64_t s, int64_t len) {
    thread_local std::vector<T> xa, xb, xo;
    xa.resize(len), xb.resize(len), xo.resize(len);
    GatherBroadcast(a, ma, s, len, xa.data());
    GatherBroadcast(b, mb, s, len, xb.data());
    kernel(xa.data(), xb.data(), xo.data(), static_cast<size_t>(len));
    if constexpr (sizeof(T) == 8) {
      StoreFromInt64(out, s, len, xo.data());
    } else {
      StoreFromInt32(out, s, len, xo.data());
    }
  });
}

absl::StatusOr<std::vector<TensorType>> InferBinary(InferContext& c, BinaryOp op) {
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
  return std::vector<TensorType>{{a.dtype, *shape}};
}

absl::Status RunBinary(RunContext& ctx, BinaryOp op) {
  const HostTensor& a = *ctx.inputs[0];
  const HostTensor& b = *ctx.inputs[1];
  const HostTensor& out = ctx.outputs[0];
  const BroadcastMap ma(a.type().shape, out.type().shape), mb(b.type().shape, out.type().shape);
  const bool saturate = ctx.preset.fp16_saturation;
  const int64_t passes = device::VectorPasses(device::KernelOf(op));
  if (a.type().dtype == v1::INT32) {
    RunIntegerBinary<int32_t>(ctx, ma, mb, passes, [op](const int32_t* x, const int32_t* y, int32_t* z, size_t n) {
      kernels::BinaryI32(op, x, y, z, n);
    });
    return absl::OkStatus();
  }
  if (a.type().dtype == v1::INT64) {
    RunIntegerBinary<int64_t>(ctx, ma, mb, passes, [op](const int64_t* x, const int64_t* y, int64_t* z, size_t n) {
      kernels::BinaryI64(op, x, y, z, n);
    });
    return absl::OkStatus();
  }
  const kernels::VectorKernelSet& k = kernels::VectorKernels();
  ForEachChunk(ctx, 3, passes, [&](int64_t s, int64_t len) {
    thread_local std::vector<float> xa, xb, xo;
    const kernels::VecDst dst = ChunkDst(out, s, len, xo);
    const uint64_t over = k.binary(op, ChunkSrc(a, ma, s, len, xa), ChunkSrc(b, mb, s, len, xb), dst,
                                   static_cast<size_t>(len), saturate);
    return FinishChunk(out, s, len, dst, over);
  });
  return absl::OkStatus();
}

absl::StatusOr<std::vector<TensorType>> InferWhere(InferContext& c) {
  if (c.inputs[0]->dtype != v1::BOOL) {
    return NodeError(c.node, InputLabel(c.node, 0), ": condition must be BOOL, got ",
                     DataTypeName(c.inputs[0]->dtype));
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
  if (!IsFloat(out.type().dtype)) {  // every integer and BOOL dtype selects exactly in int64
    const int64_t steps = ElementSize(out.type().dtype) == 8 ? 2 : 1;  // two 32-bit steps for int64
    ForEachChunk(ctx, 4, steps * device::VectorPasses(device::VectorKernel::kSelect), [&](int64_t s, int64_t len) {
      thread_local std::vector<int64_t> xc, xx, xy;
      xc.resize(len), xx.resize(len), xy.resize(len);
      GatherBroadcast(cond, mc, s, len, xc.data());
      GatherBroadcast(x, mx, s, len, xx.data());
      GatherBroadcast(y, my, s, len, xy.data());
      for (int64_t i = 0; i < len; ++i) xx[i] = xc[i] ? xx[i] : xy[i];
      StoreFromInt64(out, s, len, xx.data());
    });
    return absl::OkStatus();
  }
  const kernels::VectorKernelSet& k = kernels::VectorKernels();
  ForEachChunk(ctx, 4, device::VectorPasses(device::VectorKernel::kSelect), [&](int64_t s, int64_t len) {
    thread_local std::vector<float> xc, xx, xy, xo;
    const kernels::VecDst dst = ChunkDst(out, s, len, xo);
    const uint64_t over = k.select(ChunkSrc(cond, mc, s, len, xc), ChunkSrc(x, mx, s, len, xx),
                                   ChunkSrc(y, my, s, len, xy), dst, static_cast<size_t>(len), saturate);
    return FinishChunk(out, s, len, dst, over);
  });
  return absl::OkStatus();
}

OpDef BinaryDef(std::string name, BinaryOp op) {
  OpDef d;
  d.name = std::move(name);
  d.units = "Vector, MTE2, MTE3";
  d.task_type = device::TaskType::kAiVectorCore;
  d.dtypes = {v1::FLOAT16, v1::FLOAT32, v1::INT32, v1::INT64};
  d.min_inputs = d.max_inputs = 2;
  d.infer = [op](InferContext& c) { return InferBinary(c, op); };
  d.run = [op](RunContext& c) { return RunBinary(c, op); };
  // In a fused chain (fusion.h): the same float op, the other input its operand.
  // Comparisons make BOOL, which ends a chain.
  if (!kernels::IsComparison(op)) {
    d.fusion_step = [op](const InferContext& c, int chain_input) -> std::optional<kernels::EwStep> {
      if (!IsFloat(c.inputs[0]->dtype) || c.inputs[0]->dtype != c.inputs[1]->dtype) return std::nullopt;
      kernels::EwStep step;
      step.kind = kernels::EwStep::Kind::kBinary;
      step.binary = op;
      step.operand_first = chain_input == 1;
      return step;
    };
  }
  return d;
}

}  // namespace

void RegisterElementwiseOps(OpRegistry& r) {
  r.Register(BinaryDef("Add", BinaryOp::kAdd));
  r.Register(BinaryDef("Sub", BinaryOp::kSub));
  r.Register(BinaryDef("Mul", BinaryOp::kMul));
  r.Register(BinaryDef("Div", BinaryOp::kDiv));
  r.Register(BinaryDef("Pow", BinaryOp::kPow));
  OpDef prelu = BinaryDef("PRelu", BinaryOp::kPRelu);
  prelu.infer = [](InferContext& c) -> absl::StatusOr<std::vector<TensorType>> {
    auto types = InferBinary(c, BinaryOp::kPRelu);
    if (types.ok() && (*types)[0].shape != c.inputs[0]->shape) {
      return NodeError(c.node, InputLabel(c.node, 1), ": slope ", ShapeToString(c.inputs[1]->shape),
                       " does not broadcast to X's shape ", ShapeToString(c.inputs[0]->shape));
    }
    return types;
  };
  r.Register(std::move(prelu));
  OpDef mod = BinaryDef("Mod", BinaryOp::kMod);
  mod.attributes = {{"fmod", AttrKind::kInt}};
  mod.infer = [](InferContext& c) -> absl::StatusOr<std::vector<TensorType>> {
    auto fmod = c.attrs.Int("fmod", 0);
    if (!fmod.ok()) return fmod.status();
    if (*fmod != 0 && *fmod != 1) return NodeError(c.node, "attribute \"fmod\" = ", *fmod, " (expected 0 or 1)");
    return InferBinary(c, BinaryOp::kMod);
  };
  mod.run = [](RunContext& c) {
    return RunBinary(c, c.attrs.Int("fmod", 0).value_or(0) == 1 ? BinaryOp::kFmod : BinaryOp::kMod);
  };
  mod.fusion_step = [fused = mod.fusion_step](const InferContext& c, int chain_input) {
    auto step = fused(c, chain_input);
    if (step && c.attrs.Int("fmod", 0).value_or(0) == 1) step->binary = BinaryOp::kFmod;
    return step;
  };
  r.Register(std::move(mod));
  OpDef where;
  where.name = "Where";
  where.units = "Vector, MTE2, MTE3";
  where.task_type = device::TaskType::kAiVectorCore;
  where.dtypes = {v1::FLOAT16, v1::FLOAT32, v1::INT32, v1::INT8, v1::BOOL, v1::INT64};
  where.min_inputs = where.max_inputs = 3;
  where.infer = InferWhere;
  where.run = RunWhere;
  r.Register(std::move(where));
}

}  // namespace npu::graph::ops
