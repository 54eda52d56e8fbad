// Sum, Mean, Max and Min over one or more inputs (ONNX's variadic forms), all
// broadcast together (NumPy rules). Folded left to right in fp32, as torch
// adds a + b + c, and rounded once to the output type; Mean divides the sum by
// the count. Max and Min also take INT32/INT64, folded exactly in int64.
#include <vector>

#include "kernels/integer_math.h"
#include "kernels/vector_kernels.h"
#include "server/device/vector_passes.h"
#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/shape_args.h"
#include "server/graph/ops/vector_chunks.h"

namespace npu::graph::ops {
namespace {

using kernels::BinaryOp;

enum class Fold { kSum, kMean, kMax, kMin };

BinaryOp StepOf(Fold f) {
  switch (f) {
    case Fold::kMax: return BinaryOp::kMax;
    case Fold::kMin: return BinaryOp::kMin;
    default: return BinaryOp::kAdd;
  }
}

absl::StatusOr<std::vector<TensorType>> InferFold(InferContext& c, Fold f) {
  const bool ints = f == Fold::kMax || f == Fold::kMin;
  const DataType dtype = c.inputs[0]->dtype;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const DataType t = c.inputs[i]->dtype;
    if (!IsFloat(t) && !(ints && (t == v1::INT32 || t == v1::INT64))) {
      return NodeError(c.node, InputLabel(c.node, static_cast<int>(i)), ": dtype ", DataTypeName(t),
                       ints ? " is not supported (FLOAT16, FLOAT32, INT32, INT64)" : " is not supported (FLOAT16, FLOAT32)");
    }
    if (t != dtype) {
      return NodeError(c.node, InputLabel(c.node, static_cast<int>(i)), " (", DataTypeName(t), ") and ",
                       InputLabel(c.node, 0), " (", DataTypeName(dtype), ") have different dtypes");
    }
  }
  auto shape = BroadcastInputs(c, 0, static_cast<int>(c.inputs.size()));
  if (!shape.ok()) return shape.status();
  return std::vector<TensorType>{{dtype, *shape}};
}

absl::Status RunFold(RunContext& ctx, Fold f) {
  const HostTensor& out = ctx.outputs[0];
  const size_t n = ctx.inputs.size();
  std::vector<BroadcastMap> maps;
  for (const HostTensor* in : ctx.inputs) maps.emplace_back(in->type().shape, out.type().shape);
  const BinaryOp step = StepOf(f);
  const int64_t folds = static_cast<int64_t>(n) - 1;
  if (!IsFloat(out.type().dtype)) {
    const int64_t passes = 2 * folds * device::VectorPasses(device::KernelOf(step));  // two 32-bit steps
    ForEachChunk(ctx, static_cast<int64_t>(n) + 1, passes, [&](int64_t s, int64_t len) {
      thread_local std::vector<int64_t> acc, x;
      acc.resize(static_cast<size_t>(len)), x.resize(static_cast<size_t>(len));
      GatherBroadcast(*ctx.inputs[0], maps[0], s, len, acc.data());
      for (size_t i = 1; i < n; ++i) {
        GatherBroadcast(*ctx.inputs[i], maps[i], s, len, x.data());
        kernels::BinaryI64(step, acc.data(), x.data(), acc.data(), static_cast<size_t>(len));
      }
      StoreFromInt64(out, s, len, acc.data());
    });
    return absl::OkStatus();
  }
  const int64_t passes = folds * device::VectorPasses(device::KernelOf(step)) +
                         (f == Fold::kMean ? device::VectorPasses(device::VectorKernel::kDiv) : 0);
  const bool saturate = ctx.preset.fp16_saturation;
  const float count = static_cast<float>(n);
  const kernels::VectorKernelSet& k = kernels::VectorKernels();
  ForEachChunk(ctx, static_cast<int64_t>(n) + 1, std::max<int64_t>(1, passes), [&](int64_t s, int64_t len) {
    thread_local std::vector<float> acc, xa, xb, xo;
    const size_t m = static_cast<size_t>(len);
    acc.resize(m);
    const kernels::VecDst sum = kernels::F32Dst(acc.data());
    // Intermediate results stay fp32 (their overflow is not a store); only the last rounding counts.
    if (n == 1) {
      k.convert(ChunkSrc(*ctx.inputs[0], maps[0], s, len, xa), sum, m, false);
    } else {
      k.binary(step, ChunkSrc(*ctx.inputs[0], maps[0], s, len, xa), ChunkSrc(*ctx.inputs[1], maps[1], s, len, xb),
               sum, m, false);
    }
    for (size_t i = 2; i < n; ++i) {
      k.binary(step, kernels::F32Src(acc.data()), ChunkSrc(*ctx.inputs[i], maps[i], s, len, xb), sum, m, false);
    }
    if (f == Fold::kMean) {
      k.binary(BinaryOp::kDiv, kernels::F32Src(acc.data()), {&count, kernels::Storage::kF32, true}, sum, m, false);
    }
    const kernels::VecDst dst = ChunkDst(out, s, len, xo);
    return FinishChunk(out, s, len, dst, k.convert(kernels::F32Src(acc.data()), dst, m, saturate));
  });
  return absl::OkStatus();
}

OpDef FoldDef(std::string name, Fold f) {
  OpDef d;
  d.name = std::move(name);
  d.units = "Vector, MTE2, MTE3";
  d.task_type = device::TaskType::kAiVectorCore;
  d.dtypes = {v1::FLOAT16, v1::FLOAT32};
  if (f == Fold::kMax || f == Fold::kMin) d.dtypes = {v1::FLOAT16, v1::FLOAT32, v1::INT32, v1::INT64};
  d.min_inputs = 1;
  d.max_inputs = 4096;
  d.variadic = true;
  d.infer = [f](InferContext& c) { return InferFold(c, f); };
  d.run = [f](RunContext& c) { return RunFold(c, f); };
  return d;
}

}  // namespace

void RegisterVariadicOps(OpRegistry& r) {
  r.Register(FoldDef("Sum", Fold::kSum));
  r.Register(FoldDef("Mean", Fold::kMean));
  r.Register(FoldDef("Max", Fold::kMax));
  r.Register(FoldDef("Min", Fold::kMin));
}

}  // namespace npu::graph::ops
