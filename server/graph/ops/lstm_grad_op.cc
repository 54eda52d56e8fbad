// LSTMGrad(X, W, R, B, sequence_lens, initial_h, initial_c, P, dY, dY_h, dY_c;
// LSTM's attributes) -> dX, dW, dR, dB, d initial_h, d initial_c, dP
// (rnn_grad.h). Backwards in time, per active row, with c_p the cell state
// the step read and c its result (gates i, o, f, g as lstm_op.cc):
//   tc = tanh(c)                 dao = dh . tc . o(1 - o)
//   dct = dc + dh . o . (1 - tc^2) + dao . Po
//   dai = dct . g . i(1 - i)     daf = dct . c_p . f(1 - f)     dag = dct . i . (1 - g^2)
//   dc_p = dct . f + dai . Pi + daf . Pf                         dh_p = dA R (Cube)
//   dP += (dai . c_p, dao . c, daf . c_p)
// A pre-activation the clip clamped passes no gradient to dA; rows past their
// sequence_lens pass dh and dc through untouched.
#include <algorithm>
#include <vector>

#include "kernels/vector_kernels.h"
#include "server/device/vector_passes.h"
#include "server/graph/ops/cube_problem.h"
#include "server/graph/ops/rnn_cells.h"
#include "server/graph/ops/rnn_grad.h"

namespace npu::graph::ops {
namespace {

constexpr int kDYh = kLstmInputs + 1, kDYc = kLstmInputs + 2;  // dY is the first gradient (rnn_grad.h)
constexpr int kGradInitialC = kGradInitialH + 1, kGradP = kGradInitialH + 2;

int64_t BackPasses() {
  using device::VectorKernel;
  // Per hidden element and step: the forward re-run's, tanh(c), about twenty multiply-adds.
  return device::VectorPasses(VectorKernel::kTanh) + 12 * device::VectorPasses(VectorKernel::kMul) +
         8 * device::VectorPasses(VectorKernel::kAdd);
}

absl::StatusOr<std::vector<TensorType>> InferLstmGrad(InferContext& c) {
  RnnGradPlan plan;
  plan.forward_inputs = kLstmInputs;
  plan.cell_state = true;
  if (auto s = PlanLstm(c, kLstmInputs, plan.fwd); !s.ok()) return s;
  return InferRnnGrad(c, BackPasses(), std::move(plan));
}

absl::Status RunLstmGrad(RunContext& ctx) {
  const RnnGradPlan& plan = ctx.State<RnnGradPlan>();
  const RnnShape& s = plan.fwd.s;
  const kernels::VectorKernelSet& vk = kernels::VectorKernels();
  const int64_t h = s.hidden, gw = s.gate_width(), bh = s.batch * h, bg = s.batch * gw;
  return RunRnnGrad(ctx, [&](RnnDirection& dir, RnnGradDirection& grad, std::vector<float>& dx) -> uint64_t {
    const int64_t d = dir.index();
    // The forward, recorded: each step's gates (in run order) and cell states.
    std::vector<float> hs = dir.InitialState(kRnnInitialH), cs = dir.InitialState(kRnnInitialC);
    const std::vector<float> p = LstmPeepholes(ctx, s, d);
    std::vector<float> gates(static_cast<size_t>(s.seq * bg)), cells(static_cast<size_t>((s.seq + 1) * bh));
    std::vector<uint8_t> clipped(plan.fwd.clip > 0 ? gates.size() : 0);
    std::copy(cs.begin(), cs.end(), cells.begin());
    for (int64_t i = 0; i < s.seq; ++i) {
      if (Cancelled(ctx)) return 0;
      const int64_t t = dir.step(i);
      std::copy(hs.begin(), hs.end(), grad.h_prev(t));
      LstmStep(plan.fwd, dir, t, p.data(), hs.data(), cs.data(), gates.data() + i * bg,
               clipped.empty() ? nullptr : clipped.data() + i * bg);
      std::copy(cs.begin(), cs.end(), cells.begin() + (i + 1) * bh);
    }
    // Back in time.
    std::vector<float> dh = grad.FinalGradient(kDYh), dc = grad.FinalGradient(kDYc);
    std::vector<float> dp(static_cast<size_t>(3 * h), 0.0f), tc(static_cast<size_t>(h)), back(static_cast<size_t>(bh));
    for (int64_t i = s.seq - 1; i >= 0; --i) {
      if (Cancelled(ctx)) return 0;
      const int64_t t = dir.step(i);
      grad.AddStepGradient(dir, t, dh.data());
      for (int64_t b = 0; b < s.batch; ++b) {
        if (!dir.active(b, t)) continue;
        const float* g = gates.data() + i * bg + b * gw;
        const float *gi = g, *go = g + h, *gf = g + 2 * h, *gg = g + 3 * h;
        const float* cp = cells.data() + i * bh + b * h;
        const float* cn = cp + bh;
        vk.unary(kernels::UnaryOp::kTanh, {}, kernels::F32Src(cn), kernels::F32Dst(tc.data()), h, false);
        float* da = grad.da(t, b);
        float* dhb = dh.data() + b * h;
        float* dcb = dc.data() + b * h;
        for (int64_t j = 0; j < h; ++j) {
          const float dao = dhb[j] * tc[j] * go[j] * (1.0f - go[j]);
          const float dct = dcb[j] + dhb[j] * go[j] * (1.0f - tc[j] * tc[j]) + dao * p[h + j];
          const float dai = dct * gg[j] * gi[j] * (1.0f - gi[j]);
          const float daf = dct * cp[j] * gf[j] * (1.0f - gf[j]);
          dcb[j] = dct * gf[j] + dai * p[j] + daf * p[2 * h + j];
          dp[j] += dai * cp[j];
          dp[h + j] += dao * cn[j];
          dp[2 * h + j] += daf * cp[j];
          da[j] = dai, da[h + j] = dao, da[2 * h + j] = daf, da[3 * h + j] = dct * gi[j] * (1.0f - gg[j] * gg[j]);
        }
        if (!clipped.empty()) {
          const uint8_t* m = clipped.data() + i * bg + b * gw;
          for (int64_t j = 0; j < gw; ++j) da[j] = m[j] ? 0.0f : da[j];
        }
      }
      dir.RecurrentBack(grad.da_rec_step(t), gw, 0, gw, back.data());
      for (int64_t b = 0; b < s.batch; ++b) {
        if (dir.active(b, t)) std::copy_n(back.data() + b * h, h, dh.data() + b * h);
      }
    }
    return grad.Finish(dh, dx) + StoreGradient(ctx, kGradInitialC, d * bh, dc) +
           StoreGradient(ctx, kGradP, d * 3 * h, dp);
  });
}

}  // namespace

void RegisterLstmGradOp(OpRegistry& r) {
  OpDef d = RnnGradOpDef("LSTMGrad", kDYc + 1, kGradP + 1, LstmAttribute());
  d.infer = InferLstmGrad;
  d.run = RunLstmGrad;
  r.Register(std::move(d));
}

}  // namespace npu::graph::ops
