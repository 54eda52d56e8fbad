// GRU (ONNX opset 14, layout 0; torch's nn.GRU exports one per layer with
// linear_before_reset = 1): gates in ONNX's order z, r, h (W, R and B rows),
// activations the defaults (sigmoid, tanh):
//   z = s(x Wz + h Rz + Wbz + Rbz)     r = s(x Wr + h Rr + Wbr + Rbr)
//   linear_before_reset = 0: n = tanh(x Wh + (r . h) Rh + Rbh + Wbh)
//   linear_before_reset = 1: n = tanh(x Wh + Wbh + r . (h Rh + Rbh))   (torch)
//   h' = (1 - z) . n + z . h
// The projections on the Cube (with linear_before_reset = 0 the step's
// recurrent GEMM is two: h [Rz Rr] and (r . h) Rh), the gates on the Vector
// unit in fp32 (rnn_common.h); h stays fp32 between steps, outputs rounded once.
#include <vector>

#include "kernels/vector_kernels.h"
#include "server/device/vector_passes.h"
#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/cube_problem.h"
#include "server/graph/ops/rnn_cells.h"
#include "server/graph/ops/rnn_common.h"

namespace npu::graph::ops {
namespace {

constexpr int64_t kGates = 3;

int64_t GatePasses() {
  using device::VectorKernel;
  // Per hidden element: two sigmoids, one tanh, r . (...), (1 - z) . n + z . h.
  return 2 * device::VectorPasses(VectorKernel::kSigmoid) + device::VectorPasses(VectorKernel::kTanh) +
         3 * device::VectorPasses(VectorKernel::kMul) + (kGates + 2) * device::VectorPasses(VectorKernel::kAdd);
}

absl::StatusOr<std::vector<TensorType>> InferGru(InferContext& c) {
  RnnPlan plan;
  if (auto s = PlanGru(c, kGruInputs, plan); !s.ok()) return s;
  std::vector<TensorType> out = RnnOutputTypes(c, plan.s, false);
  c.Prepare(std::move(plan));
  return out;
}

}  // namespace

absl::Status PlanGru(InferContext& c, int inputs, RnnPlan& plan) {
  auto lbr = c.attrs.Int("linear_before_reset", 0);
  if (!lbr.ok()) return lbr.status();
  if (auto s = PlanRnn(c, kGates, GatePasses(), inputs, plan); !s.ok()) return s;
  plan.linear_before_reset = *lbr != 0;
  // Rbh stays inside r . (h Rh + Rbh) with linear_before_reset; otherwise every Rb adds to its Wb.
  plan.folded_rb_rows = plan.linear_before_reset ? 2 * plan.s.hidden : plan.s.gate_width();
  return absl::OkStatus();
}

void GruStep(const RnnPlan& plan, RnnDirection& dir, int64_t t, float* hs, float* gates, float* n, float* rh,
             uint8_t* clipped) {
  const RnnShape& s = plan.s;
  const kernels::VectorKernelSet& vk = kernels::VectorKernels();
  const int64_t h = s.hidden, gw = s.gate_width();
  const bool lbr = plan.linear_before_reset;
  const int64_t ld = lbr ? gw : 2 * h;  // gates' row length
  const float* xw = dir.projected(t);
  // z and r (and, with linear_before_reset, h Rh) from one GEMM of h.
  dir.Recurrent(hs, 0, ld, gates);
  for (int64_t b = 0; b < s.batch; ++b) {
    float* zr = gates + b * ld;
    for (int64_t j = 0; j < 2 * h; ++j) zr[j] += xw[b * gw + j];
    ClipPreActivations(plan.clip, zr, 2 * h, clipped == nullptr ? nullptr : clipped + b * gw);
    vk.unary(kernels::UnaryOp::kSigmoid, {}, kernels::F32Src(zr), kernels::F32Dst(zr), 2 * h, false);
    const float* r = zr + h;
    for (int64_t j = 0; j < h; ++j) {
      if (lbr) {
        n[b * h + j] = xw[b * gw + 2 * h + j] + r[j] * (zr[2 * h + j] + dir.rb(2 * h + j));
      } else {
        rh[b * h + j] = r[j] * hs[b * h + j];
      }
    }
  }
  if (!lbr) {
    dir.Recurrent(rh, 2 * h, h, n);
    for (int64_t b = 0; b < s.batch; ++b) {
      for (int64_t j = 0; j < h; ++j) n[b * h + j] += xw[b * gw + 2 * h + j];
    }
  }
  for (int64_t b = 0; b < s.batch; ++b) {
    if (!dir.active(b, t)) continue;
    float* nb = n + b * h;
    const float* z = gates + b * ld;
    ClipPreActivations(plan.clip, nb, h, clipped == nullptr ? nullptr : clipped + b * gw + 2 * h);
    vk.unary(kernels::UnaryOp::kTanh, {}, kernels::F32Src(nb), kernels::F32Dst(nb), h, false);
    for (int64_t j = 0; j < h; ++j) hs[b * h + j] = (1.0f - z[j]) * nb[j] + z[j] * hs[b * h + j];
  }
}

namespace {

absl::Status RunGru(RunContext& ctx) {
  const RnnPlan& plan = ctx.State<RnnPlan>();
  const RnnShape& s = plan.s;
  if (auto st = CheckSequenceLens(ctx, s.seq, s.batch); !st.ok()) return st;
  const int64_t h = s.hidden;
  uint64_t overflow = 0;
  for (int64_t d = 0; d < s.dirs; ++d) {
    RnnDirection dir(ctx, plan, d);
    std::vector<float> hs = dir.InitialState(kRnnInitialH);
    std::vector<float> g(static_cast<size_t>(s.batch * s.gate_width())), rh(static_cast<size_t>(s.batch * h)),
        n(static_cast<size_t>(s.batch * h));
    for (int64_t i = 0; i < s.seq; ++i) {
      if (ctx.cancel != nullptr && ctx.cancel->load(std::memory_order_relaxed)) break;  // the executor reports it
      const int64_t t = dir.step(i);
      GruStep(plan, dir, t, hs.data(), g.data(), n.data(), rh.data(), nullptr);
      dir.StoreStep(t, hs.data());
    }
    dir.StoreFinal(1, hs);
    overflow += dir.overflow();
  }
  SetCubeWork(ctx, plan.work, overflow);
  return absl::OkStatus();
}

}  // namespace

void RegisterGruOp(OpRegistry& r) {
  OpDef d = RnnOpDef("GRU", kGruInputs, 2, GruAttribute());
  d.infer = InferGru;
  d.run = RunGru;
  r.Register(std::move(d));
}

}  // namespace npu::graph::ops
