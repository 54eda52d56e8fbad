// Softmax and LogSoftmax (opset 13: one axis, default -1) on the Vector unit.
// Along the last axis each row runs the online softmax kernel (one max/sum
// pass over blocks, one write pass); along an inner axis, blocks of up to 64
// softmaxes run side by side, one per lane (kernels/vector_kernels.h).
#include <algorithm>
#include <vector>

#include "kernels/vector_kernels.h"
#include "server/device/vector_passes.h"
#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/shape_args.h"
#include "server/graph/ops/vector_chunks.h"
#include "server/graph/vector_tiling.h"

namespace npu::graph::ops {
namespace {

absl::StatusOr<std::vector<TensorType>> InferSoftmax(InferContext& c) {
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

// Softmaxes over an inner axis run side by side in blocks of this many (one
// per Vector lane group), each block's exponentials staying in UB.
constexpr int64_t kColumnBlock = 64;

absl::Status RunSoftmax(RunContext& ctx, bool log) {
  const HostTensor& x = *ctx.inputs[0];
  const HostTensor& out = ctx.outputs[0];
  const Shape& s = x.type().shape;
  const int64_t rank = static_cast<int64_t>(s.size());
  const int64_t axis = rank == 0 ? 0 : *NormalizeAxis(ctx.node, ctx.attrs.Int("axis", -1).value(), rank);
  const int64_t len = rank == 0 ? 1 : s[axis];
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < rank; ++d) inner *= s[d];
  if (len == 0 || x.type().elements() == 0) return absl::OkStatus();
  const int64_t outer = x.type().elements() / (len * inner);
  // A unit of work: one row along the last axis, or one block of columns.
  const int64_t blocks_per_outer = inner == 1 ? 1 : (inner + kColumnBlock - 1) / kColumnBlock;
  const int64_t units = outer * blocks_per_outer;
  const int64_t in_bytes = static_cast<int64_t>(ElementSize(x.type().dtype));
  const bool saturate = ctx.preset.fp16_saturation;
  const kernels::VectorKernelSet& k = kernels::VectorKernels();
  ForEachUnitTile(ctx, units, [&](device::TileWork& w, int64_t u0, int64_t u1) {
    thread_local std::vector<float> scratch;
    scratch.resize(inner == 1 ? kernels::SoftmaxScratchFloats(static_cast<size_t>(len))
                              : static_cast<size_t>(len * kColumnBlock));
    for (int64_t u = u0; u < u1; ++u) {
      const int64_t o = u / blocks_per_outer, j0 = (u % blocks_per_outer) * kColumnBlock;
      const int64_t width = inner == 1 ? 1 : std::min(kColumnBlock, inner - j0);
      const int64_t base = o * len * inner + j0;
      if (inner == 1) {
        w.overflow_elements += k.softmax_row(SrcAt(x, base), DstAt(out, base), static_cast<size_t>(len), log,
                                             saturate, scratch.data());
      } else {
        w.overflow_elements += k.softmax_columns(SrcAt(x, base), DstAt(out, base), static_cast<size_t>(len),
                                                 static_cast<size_t>(inner), static_cast<size_t>(width), log,
                                                 saturate, scratch.data());
      }
      // the online max/sum pass and the write pass (vector_passes.h), in fp32 lanes.
      w += VectorChunkWork(len * width, len * width * in_bytes, len * width * in_bytes, 4,
                           device::VectorPasses(device::VectorKernel::kSoftmaxRow));
    }
  });
  return absl::OkStatus();
}

OpDef SoftmaxDef(std::string name, bool log) {
  OpDef d;
  d.name = std::move(name);
  d.units = "Vector, MTE2, MTE3";
  d.task_type = device::TaskType::kAiVectorCore;
  d.dtypes = {v1::FLOAT16, v1::FLOAT32};
  d.attributes = {{"axis", AttrKind::kInt}};
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
