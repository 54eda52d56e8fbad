// GRUGrad(X, W, R, B, sequence_lens, initial_h, dY, dY_h; GRU's attributes)
// -> dX, dW, dR, dB, d initial_h (rnn_grad.h). Backwards in time, per active
// row, with h_p the state the step read (gates z, r, n as gru_op.cc):
//   dan = dh . (1 - z) . (1 - n^2)        daz = dh . (h_p - n) . z(1 - z)
//   linear_before_reset = 1: q = h_p Rh + Rbh (recorded)
//     dar = dan . q . r(1 - r); R's and Rb's h rows see r . dan
//     dh_p = dh . z + [daz dar (r . dan)] R                        (one GEMM)
//   linear_before_reset = 0: u = dan Rh (the gradient of r . h_p)
//     dar = u . h_p . r(1 - r); R's h rows meet r . h_p
//     dh_p = dh . z + u . r + [daz dar] [Rz Rr]                    (two GEMMs)
// A pre-activation the clip clamped passes no gradient; rows past their
// sequence_lens pass dh through untouched.
#include <algorithm>
#include <vector>

#include "server/device/vector_passes.h"
#include "server/graph/ops/cube_problem.h"
#include "server/graph/ops/rnn_cells.h"
#include "server/graph/ops/rnn_grad.h"

namespace npu::graph::ops {
namespace {

constexpr int kDYh = kGruInputs + 1;  // dY is the first gradient (rnn_grad.h)

int64_t BackPasses() {
  using device::VectorKernel;
  // Per hidden element and step: about a dozen multiply-adds.
  return 8 * device::VectorPasses(VectorKernel::kMul) + 5 * device::VectorPasses(VectorKernel::kAdd);
}

absl::StatusOr<std::vector<TensorType>> InferGruGrad(InferContext& c) {
  RnnGradPlan plan;
  plan.forward_inputs = kGruInputs;
  if (auto s = PlanGru(c, kGruInputs, plan.fwd); !s.ok()) return s;
  return InferRnnGrad(c, BackPasses(), std::move(plan));
}

// 0 where the clip clamped the pre-activation (mask at j), else v.
float Unclipped(const uint8_t* mask, int64_t j, float v) { return mask != nullptr && mask[j] ? 0.0f : v; }

absl::Status RunGruGrad(RunContext& ctx) {
  const RnnGradPlan& plan = ctx.State<RnnGradPlan>();
  const RnnShape& s = plan.fwd.s;
  const bool lbr = plan.fwd.linear_before_reset;
  const int64_t h = s.hidden, gw = s.gate_width(), bh = s.batch * h;
  const int64_t ld = lbr ? gw : 2 * h, bl = s.batch * ld;  // the recorded gates' row length (GruStep)
  return RunRnnGrad(ctx, [&](RnnDirection& dir, RnnGradDirection& grad, std::vector<float>& dx) -> uint64_t {
    // The forward, recorded: each step's gates and candidate (in run order).
    std::vector<float> hs = dir.InitialState(kRnnInitialH), scratch(static_cast<size_t>(bh));
    std::vector<float> gates(static_cast<size_t>(s.seq * bl)), ns(static_cast<size_t>(s.seq * bh));
    std::vector<uint8_t> clipped(plan.fwd.clip > 0 ? static_cast<size_t>(s.seq * s.batch * gw) : 0);
    for (int64_t i = 0; i < s.seq; ++i) {
      if (Cancelled(ctx)) return 0;
      const int64_t t = dir.step(i);
      std::copy(hs.begin(), hs.end(), grad.h_prev(t));
      GruStep(plan.fwd, dir, t, hs.data(), gates.data() + i * bl, ns.data() + i * bh,
              lbr ? scratch.data() : grad.rh_prev(t), clipped.empty() ? nullptr : clipped.data() + i * s.batch * gw);
    }
    // Back in time.
    std::vector<float> dh = grad.FinalGradient(kDYh), next(static_cast<size_t>(bh)), back(static_cast<size_t>(bh));
    for (int64_t i = s.seq - 1; i >= 0; --i) {
      if (Cancelled(ctx)) return 0;
      const int64_t t = dir.step(i);
      grad.AddStepGradient(dir, t, dh.data());
      for (int64_t b = 0; b < s.batch; ++b) {
        if (!dir.active(b, t)) continue;
        const float *z = gates.data() + i * bl + b * ld, *r = z + h, *n = ns.data() + i * bh + b * h;
        const float* hp = grad.h_prev(t) + b * h;
        const uint8_t* m = clipped.empty() ? nullptr : clipped.data() + (i * s.batch + b) * gw;
        float* da = grad.da(t, b);
        const float* dhb = dh.data() + b * h;
        for (int64_t j = 0; j < h; ++j) {
          da[j] = Unclipped(m, j, dhb[j] * (hp[j] - n[j]) * z[j] * (1.0f - z[j]));
          da[2 * h + j] = Unclipped(m, 2 * h + j, dhb[j] * (1.0f - z[j]) * (1.0f - n[j] * n[j]));
          next[b * h + j] = dhb[j] * z[j];
        }
        if (lbr) {
          float* rec = grad.da_rec(t, b);
          for (int64_t j = 0; j < h; ++j) {
            const float q = z[2 * h + j] + dir.rb(2 * h + j);
            da[h + j] = Unclipped(m, h + j, da[2 * h + j] * q * r[j] * (1.0f - r[j]));
            rec[j] = da[j], rec[h + j] = da[h + j], rec[2 * h + j] = da[2 * h + j] * r[j];
          }
        }
      }
      if (lbr) {
        dir.RecurrentBack(grad.da_rec_step(t), gw, 0, gw, back.data());
      } else {
        // u = dan Rh first: r's gradient needs it.
        dir.RecurrentBack(grad.da(t, 0) + 2 * h, gw, 2 * h, h, back.data());
        for (int64_t b = 0; b < s.batch; ++b) {
          if (!dir.active(b, t)) continue;
          const float *r = gates.data() + i * bl + b * ld + h, *hp = grad.h_prev(t) + b * h, *u = back.data() + b * h;
          const uint8_t* m = clipped.empty() ? nullptr : clipped.data() + (i * s.batch + b) * gw;
          float* da = grad.da(t, b);
          for (int64_t j = 0; j < h; ++j) {
            da[h + j] = Unclipped(m, h + j, u[j] * hp[j] * r[j] * (1.0f - r[j]));
            next[b * h + j] += u[j] * r[j];
          }
        }
        dir.RecurrentBack(grad.da(t, 0), gw, 0, 2 * h, back.data());
      }
      for (int64_t b = 0; b < s.batch; ++b) {
        if (!dir.active(b, t)) continue;
        for (int64_t j = 0; j < h; ++j) dh[b * h + j] = next[b * h + j] + back[b * h + j];
      }
    }
    return grad.Finish(dh, dx);
  });
}

}  // namespace

void RegisterGruGradOp(OpRegistry& r) {
  OpDef d = RnnGradOpDef("GRUGrad", kDYh + 1, kGradInitialH + 1, GruAttribute());
  d.infer = InferGruGrad;
  d.run = RunGruGrad;
  r.Register(std::move(d));
}

}  // namespace npu::graph::ops
