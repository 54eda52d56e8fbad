// Gemm (ONNX): Y = alpha * op(A) x op(B) + beta * C on the Cube. When C is a
// per-column bias with alpha = beta = 1 (nn.Linear), FixPipe adds it in fp32
// on the way out and rounds once. Otherwise the Cube writes fp32 and one
// Vector pass applies alpha, beta and C (broadcast), rounding once.
#include <vector>

#include "kernels/cube_gemm.h"
#include "server/device/vector_passes.h"
#include "server/graph/broadcast.h"
#include "server/graph/cube_tiling.h"
#include "server/graph/element_access.h"
#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/cube_work.h"
#include "server/graph/ops/vector_chunks.h"

namespace npu::graph::ops {
namespace {

struct GemmAttrs {
  float alpha = 1, beta = 1;
  bool trans_a = false, trans_b = false;
};

absl::StatusOr<GemmAttrs> ReadAttrs(const NodeAttributes& attrs) {
  auto alpha = attrs.Float("alpha", 1.0f);
  auto beta = attrs.Float("beta", 1.0f);
  auto ta = attrs.Int("transA", 0);
  auto tb = attrs.Int("transB", 0);
  for (const absl::Status& s : {alpha.status(), beta.status(), ta.status(), tb.status()}) {
    if (!s.ok()) return s;
  }
  return GemmAttrs{*alpha, *beta, *ta != 0, *tb != 0};
}

absl::StatusOr<std::vector<TensorType>> InferGemm(InferContext& c) {
  if (auto s = c.attrs.CheckKnown({"alpha", "beta", "transA", "transB"}); !s.ok()) return s;
  auto at = ReadAttrs(c.attrs);
  if (!at.ok()) return at.status();
  const TensorType& a = *c.inputs[0];
  const TensorType& b = *c.inputs[1];
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (c.inputs[i] == nullptr) continue;
    if (!IsFloat(c.inputs[i]->dtype) || c.inputs[i]->dtype != a.dtype) {
      return NodeError(c.node, InputLabel(c.node, static_cast<int>(i)), ": dtype ",
                       DataTypeName(c.inputs[i]->dtype), " must be FLOAT16 or FLOAT32 and match input A");
    }
  }
  if (a.shape.size() != 2 || b.shape.size() != 2) {
    return NodeError(c.node, "A and B must be 2-D, got ", ToString(a), " and ", ToString(b));
  }
  const int64_t m = at->trans_a ? a.shape[1] : a.shape[0], k = at->trans_a ? a.shape[0] : a.shape[1];
  const int64_t kb = at->trans_b ? b.shape[1] : b.shape[0], n = at->trans_b ? b.shape[0] : b.shape[1];
  if (k != kb) {
    return NodeError(c.node, "inner dimensions ", k, " (", InputLabel(c.node, 0), " ", ShapeToString(a.shape),
                     ") and ", kb, " (", InputLabel(c.node, 1), " ", ShapeToString(b.shape), ") differ");
  }
  const Shape out{m, n};
  if (c.inputs.size() > 2 && c.inputs[2] != nullptr) {
    auto bs = BroadcastShapes(c.inputs[2]->shape, out);
    if (!bs.ok() || *bs != out) {
      return NodeError(c.node, InputLabel(c.node, 2), " ", ShapeToString(c.inputs[2]->shape),
                       " does not broadcast to ", ShapeToString(out));
    }
  }
  return std::vector<TensorType>{{a.dtype, out}};
}

absl::Status RunGemm(RunContext& ctx) {
  const GemmAttrs at = *ReadAttrs(ctx.attrs);
  const HostTensor& a = *ctx.inputs[0];
  const HostTensor& b = *ctx.inputs[1];
  const HostTensor* c = ctx.inputs.size() > 2 ? ctx.inputs[2] : nullptr;
  const HostTensor& out = ctx.outputs[0];
  const int64_t m = out.type().shape[0], n = out.type().shape[1];
  const int64_t k = at.trans_a ? a.type().shape[0] : a.type().shape[1];
  const CubePlan plan = PlanCubeTiles(1, m, n, k, ctx.preset);
  if (auto s = CheckCubeTileFits(plan.tile, ctx.preset); !s.ok()) return s;
  ctx.work.task_type = device::TaskType::kAiCore;

  kernels::GemmProblem p;
  p.m = m, p.n = n, p.k = k;
  p.a = a.data(), p.a_type = CubeType(a.type().dtype), p.lda = a.type().shape[1], p.trans_a = at.trans_a;
  p.b = b.data(), p.b_type = CubeType(b.type().dtype), p.ldb = b.type().shape[1], p.trans_b = at.trans_b;
  p.ldc = n;
  p.saturate_fp16 = ctx.preset.fp16_saturation;
  std::vector<kernels::CubeTileCounts> counts;

  // FixPipe path: no scaling, C absent or a row vector added in fp32.
  const bool c_is_row = c == nullptr || (c->type().elements() == n && (c->type().shape.size() < 2 || c->type().shape[0] == 1));
  if (at.alpha == 1.0f && (c == nullptr || at.beta == 1.0f) && c_is_row) {
    std::vector<float> bias;
    if (c != nullptr) {
      bias.resize(static_cast<size_t>(n));
      LoadAsFloat(*c, 0, c->type().elements() == 1 ? 0 : 1, n, bias.data());
      p.bias = bias.data();
    }
    p.c = out.mutable_data();
    p.c_type = CubeType(out.type().dtype);
    kernels::CubeGemm(p, plan.tile, &counts);
    graph::AppendCubeTiles(counts, p.m, p.n, p.k, plan, 0, 0, ctx.preset, ctx.work);
    return absl::OkStatus();
  }

  // General path: fp32 accumulators, then alpha * acc + beta * C on the Vector unit.
  HostTensor acc = HostTensor::Allocate({v1::FLOAT32, out.type().shape});
  p.c = acc.mutable_data();
  p.c_type = kernels::ElemType::kFloat32;
  kernels::CubeGemm(p, plan.tile, &counts);
  const BroadcastMap cmap(c ? c->type().shape : Shape{}, out.type().shape);
  const bool saturate = ctx.preset.fp16_saturation;
  // The Vector pass reads the accumulators (and C): count those as its inputs.
  const std::vector<const HostTensor*> node_inputs = ctx.inputs;
  ctx.inputs = {&acc};
  if (c != nullptr) ctx.inputs.push_back(c);
  ForEachChunk(ctx, 3, device::VectorPasses(device::VectorKernel::kScaleAndAdd), [&](int64_t s, int64_t len) {
    thread_local std::vector<float> xc, xo;
    const float* pa = acc.as<float>() + s;
    float* po = OutChunk(out, s, len, xo);
    if (c != nullptr && at.beta != 0.0f) {
      const float* pc = ChunkAsFloat(*c, cmap, s, len, xc);
      for (int64_t i = 0; i < len; ++i) po[i] = at.alpha * pa[i] + at.beta * pc[i];
    } else {
      for (int64_t i = 0; i < len; ++i) po[i] = at.alpha * pa[i];
    }
    FinishChunk(out, s, len, po, saturate);
  });
  ctx.inputs = node_inputs;
  graph::AppendCubeTiles(counts, p.m, p.n, p.k, plan, 0, 0, ctx.preset, ctx.work);
  return absl::OkStatus();
}

}  // namespace

void RegisterGemmOp(OpRegistry& r) {
  OpDef d;
  d.name = "Gemm";
  d.units = "Cube, MTE1, MTE2, FixPipe (+ Vector for alpha/beta)";
  d.task_type = device::TaskType::kAiCore;
  d.dtypes = {v1::FLOAT16, v1::FLOAT32};
  d.min_inputs = 2;
  d.max_inputs = 3;
  d.infer = InferGemm;
  d.run = RunGemm;
  r.Register(std::move(d));
}

}  // namespace npu::graph::ops
