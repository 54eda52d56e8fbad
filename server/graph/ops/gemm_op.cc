// Gemm (ONNX): Y = alpha * op(A) x op(B) + beta * C on the Cube. When C is a
// per-column bias with alpha = beta = 1 (nn.Linear), FixPipe adds it in fp32
// on the way out and rounds once. Otherwise the Cube writes fp32 and one
// Vector pass applies alpha, beta and C (broadcast), rounding once. A constant
// B is packed into the Cube's layout, and a constant bias read, once at plan time.
#include <vector>

#include "kernels/cube_gemm.h"
#include "server/device/vector_passes.h"
#include "server/graph/broadcast.h"
#include "server/graph/element_access.h"
#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/cube_problem.h"
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

// What a run needs, prepared once at plan time.
struct GemmPlan {
  GemmAttrs attrs;
  int64_t m = 0, n = 0, k = 0;
  device::OpWork cube_work;  // the device's tiles of the GEMM
  bool fixpipe_bias = false;   // C (if any) is a row vector added by FixPipe, alpha = beta = 1
  std::vector<float> bias;     // that row, when C is constant
  std::shared_ptr<const kernels::PackedCubeB> packed_b;  // B constant: packed once, here
  std::shared_ptr<const CubeEpiloguePlan> epilogue;      // fused ops FixPipe applies (fusion.h)
};

std::vector<float> RowBias(const HostTensor& c, int64_t n);

absl::StatusOr<std::vector<TensorType>> InferGemm(InferContext& c) {
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
  auto model = PlanCubeModel(c, 1, m, n, k);
  if (!model.ok()) return model.status();
  GemmPlan plan;
  plan.attrs = *at;
  plan.m = m, plan.n = n, plan.k = k;
  const TensorType* bias = c.inputs.size() > 2 ? c.inputs[2] : nullptr;
  plan.fixpipe_bias = at->alpha == 1.0f && (bias == nullptr || at->beta == 1.0f) &&
                      (bias == nullptr || (bias->elements() == n && (bias->shape.size() < 2 || bias->shape[0] == 1)));
  if (bias != nullptr && c.constants[2] != nullptr && plan.fixpipe_bias) {
    plan.bias = RowBias(*c.constants[2], n);
  }
  if (m > 0 && n > 0) {
    // Without FixPipe's bias the Cube writes fp32 accumulators for the Vector pass.
    AppendModelGemm(m, n, k, plan.fixpipe_bias ? CubeType(a.dtype) : kernels::ElemType::kFloat32, *model, 0, 0,
                    *c.preset, plan.cube_work);
  }
  if (c.constants[1] != nullptr) {
    plan.packed_b = PackConstantB(*c.constants[1], k, n, b.shape[1], at->trans_b, 1, 0, *c.preset);
  }
  plan.epilogue = PlanEpilogue(c);
  if (plan.epilogue) {
    // FixPipe applies it after its bias; alpha and beta take a Vector pass after the Cube instead.
    if (!plan.fixpipe_bias) return NodeError(c.node, "a fused epilogue needs alpha = beta = 1 and a row bias");
    AddEpilogueWork(*plan.epilogue, m * n, EpilogueOperandTypes(c, *plan.epilogue), plan.cube_work);
  }
  c.Prepare(std::move(plan));
  return std::vector<TensorType>{{a.dtype, out}};
}

// C as FixPipe's bias: n values, or one broadcast to all.
std::vector<float> RowBias(const HostTensor& c, int64_t n) {
  std::vector<float> bias(static_cast<size_t>(n));
  LoadAsFloat(c, 0, c.type().elements() == 1 ? 0 : 1, n, bias.data());
  return bias;
}

absl::Status RunGemm(RunContext& ctx) {
  const GemmPlan& plan = ctx.State<GemmPlan>();
  const GemmAttrs& at = plan.attrs;
  const HostTensor& a = *ctx.inputs[0];
  const HostTensor& b = *ctx.inputs[1];
  const HostTensor* c = ctx.inputs.size() > 2 ? ctx.inputs[2] : nullptr;
  const HostTensor& out = ctx.outputs[0];
  const int64_t n = plan.n;
  ctx.work.task_type = device::TaskType::kAiCore;

  kernels::GemmProblem p = CubeProblem(ctx, a.type().dtype, b.type().dtype, out.type().dtype);
  p.m = plan.m, p.n = plan.n, p.k = plan.k;
  p.a = a.data(), p.lda = a.type().shape[1], p.trans_a = at.trans_a;
  p.b = b.data(), p.ldb = b.type().shape[1], p.trans_b = at.trans_b;
  p.packed_b = plan.packed_b.get();
  p.ldc = n;

  // FixPipe path: no scaling, C absent or a row vector added in fp32.
  if (plan.fixpipe_bias) {
    std::vector<float> bias;
    if (c != nullptr) {
      if (plan.bias.empty()) bias = RowBias(*c, n);
      p.bias = plan.bias.empty() ? bias.data() : plan.bias.data();
    }
    p.c = out.mutable_data();
    kernels::CubeEpilogue epilogue;
    if (plan.epilogue) {
      epilogue = BindEpilogue(ctx, *plan.epilogue, 0, 0);
      p.epilogue = &epilogue;
    }
    SetCubeWork(ctx, plan.cube_work, RunCubeGemm(p));
    return absl::OkStatus();
  }

  // General path: fp32 accumulators, then alpha * acc + beta * C on the Vector unit.
  HostTensor acc = HostTensor::Allocate({v1::FLOAT32, out.type().shape});
  p.c = acc.mutable_data();
  p.c_type = kernels::ElemType::kFloat32;
  const uint64_t overflow = RunCubeGemm(p);
  if (ctx.cancel != nullptr && ctx.cancel->load(std::memory_order_relaxed)) return absl::OkStatus();
  const BroadcastMap cmap(c ? c->type().shape : Shape{}, out.type().shape);
  const bool saturate = ctx.preset.fp16_saturation;
  // The Vector pass reads the accumulators (and C): count those as its inputs.
  const std::vector<const HostTensor*> node_inputs = ctx.inputs;
  ctx.inputs = {&acc};
  if (c != nullptr) ctx.inputs.push_back(c);
  ForEachChunk(ctx, 3, device::VectorPasses(device::VectorKernel::kScaleAndAdd), [&](int64_t s, int64_t len) {
    thread_local std::vector<float> xc, xo;
    const float* pa = acc.as<float>() + s;
    xo.resize(static_cast<size_t>(len));
    float* po = xo.data();
    if (c != nullptr && at.beta != 0.0f) {
      const float* pc = ChunkAsFloat(*c, cmap, s, len, xc);
      for (int64_t i = 0; i < len; ++i) po[i] = at.alpha * pa[i] + at.beta * pc[i];
    } else {
      for (int64_t i = 0; i < len; ++i) po[i] = at.alpha * pa[i];
    }
    return StoreFromFloat(out, s, len, po, saturate);
  });
  ctx.inputs = node_inputs;
  // The op's work: the Vector pass's tiles, then the Cube's.
  device::OpWork vector_work = std::move(ctx.work);
  SetCubeWork(ctx, plan.cube_work, overflow);
  ctx.work.tiles.insert(ctx.work.tiles.begin(), vector_work.tiles.begin(), vector_work.tiles.end());
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
  d.attributes = {{"alpha", AttrKind::kFloat},
                  {"beta", AttrKind::kFloat},
                  {"transA", AttrKind::kInt},
                  {"transB", AttrKind::kInt}};
  d.infer = InferGemm;
  d.run = RunGemm;
  d.epilogue_axis = -1;  // FixPipe applies fused ops; per-column operands run along the last axis
  r.Register(std::move(d));
}

}  // namespace npu::graph::ops
