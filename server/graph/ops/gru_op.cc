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
#include <algorithm>
#include <vector>

#include "kernels/vector_kernels.h"
#include "server/device/vector_passes.h"
#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/cube_problem.h"
#include "server/graph/ops/rnn_common.h"

namespace npu::graph::ops {
namespace {

constexpr int kInitialH = 5;
constexpr int64_t kGates = 3;

int64_t GatePasses() {
  using device::VectorKernel;
  // Per hidden element: two sigmoids, one tanh, r . (...), (1 - z) . n + z . h.
  return 2 * device::VectorPasses(VectorKernel::kSigmoid) + device::VectorPasses(VectorKernel::kTanh) +
         3 * device::VectorPasses(VectorKernel::kMul) + (kGates + 2) * device::VectorPasses(VectorKernel::kAdd);
}

absl::StatusOr<std::vector<TensorType>> InferGru(InferContext& c) {
  auto lbr = c.attrs.Int("linear_before_reset", 0);
  if (!lbr.ok()) return lbr.status();
  RnnPlan plan;
  if (auto s = PlanRnn(c, kGates, GatePasses(), plan); !s.ok()) return s;
  plan.linear_before_reset = *lbr != 0;
  // Rbh stays inside r . (h Rh + Rbh) with linear_before_reset; otherwise every Rb adds to its Wb.
  plan.folded_rb_rows = plan.linear_before_reset ? 2 * plan.s.hidden : plan.s.gate_width();
  std::vector<TensorType> out = RnnOutputTypes(c, plan.s, false);
  c.Prepare(std::move(plan));
  return out;
}

absl::Status RunGru(RunContext& ctx) {
  const RnnPlan& plan = ctx.State<RnnPlan>();
  const RnnShape& s = plan.s;
  if (auto st = CheckSequenceLens(ctx, s.seq, s.batch); !st.ok()) return st;
  const kernels::VectorKernelSet& vk = kernels::VectorKernels();
  const int64_t h = s.hidden, gw = s.gate_width();
  uint64_t overflow = 0;
  for (int64_t d = 0; d < s.dirs; ++d) {
    RnnDirection dir(ctx, plan, d);
    std::vector<float> hs = dir.InitialState(kInitialH);
    std::vector<float> g(static_cast<size_t>(s.batch * gw)), rh(static_cast<size_t>(s.batch * h)),
        n(static_cast<size_t>(s.batch * h));
    auto clip = [&](float* v, int64_t len) {
      if (plan.clip > 0) {
        for (int64_t j = 0; j < len; ++j) v[j] = std::clamp(v[j], -plan.clip, plan.clip);
      }
    };
    for (int64_t i = 0; i < s.seq; ++i) {
      if (ctx.cancel != nullptr && ctx.cancel->load(std::memory_order_relaxed)) break;  // the executor reports it
      const int64_t t = dir.step(i);
      const float* xw = dir.projected(t);
      // z and r (and, with linear_before_reset, h Rh) from one GEMM of h.
      dir.Recurrent(hs.data(), 0, plan.linear_before_reset ? gw : 2 * h, g.data());
      const int64_t ld = plan.linear_before_reset ? gw : 2 * h;  // g's row length
      for (int64_t b = 0; b < s.batch; ++b) {
        float* zr = g.data() + b * ld;
        for (int64_t j = 0; j < 2 * h; ++j) zr[j] += xw[b * gw + j];
        clip(zr, 2 * h);
        vk.unary(kernels::UnaryOp::kSigmoid, {}, kernels::F32Src(zr), kernels::F32Dst(zr), 2 * h, false);
        const float* r = zr + h;
        for (int64_t j = 0; j < h; ++j) {
          if (plan.linear_before_reset) {
            n[b * h + j] = xw[b * gw + 2 * h + j] + r[j] * (zr[2 * h + j] + dir.rb(2 * h + j));
          } else {
            rh[b * h + j] = r[j] * hs[b * h + j];
          }
        }
      }
      if (!plan.linear_before_reset) {
        dir.Recurrent(rh.data(), 2 * h, h, n.data());
        for (int64_t b = 0; b < s.batch; ++b) {
          for (int64_t j = 0; j < h; ++j) n[b * h + j] += xw[b * gw + 2 * h + j];
        }
      }
      for (int64_t b = 0; b < s.batch; ++b) {
        if (!dir.active(b, t)) continue;
        float* nb = n.data() + b * h;
        const float* z = g.data() + b * ld;
        clip(nb, h);
        vk.unary(kernels::UnaryOp::kTanh, {}, kernels::F32Src(nb), kernels::F32Dst(nb), h, false);
        for (int64_t j = 0; j < h; ++j) hs[b * h + j] = (1.0f - z[j]) * nb[j] + z[j] * hs[b * h + j];
      }
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
  OpDef d = RnnOpDef("GRU", 6, 2, {"linear_before_reset", AttrKind::kInt});
  d.infer = InferGru;
  d.run = RunGru;
  r.Register(std::move(d));
}

}  // namespace npu::graph::ops
