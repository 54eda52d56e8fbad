// LSTM (ONNX opset 14, layout 0; torch's nn.LSTM exports one per layer):
// gates in ONNX's order i, o, f, c (W, R and B rows), peepholes P optional,
// activations the defaults (sigmoid, tanh, tanh):
//   i = s(x Wi + h Ri + Wbi + Rbi + Pi . c)      f = s(... f ... + Pf . c)
//   g = tanh(x Wc + h Rc + Wbc + Rbc)            c' = f . c + i . g
//   o = s(x Wo + h Ro + Wbo + Rbo + Po . c')     h' = o . tanh(c')
// The projections on the Cube, the gates on the Vector unit in fp32
// (rnn_common.h); c and h stay fp32 between steps, outputs rounded once.
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

constexpr int64_t kGates = 4;

int64_t GatePasses() {
  using device::VectorKernel;
  // Per hidden element: three sigmoids, two tanh, the cell's two mul + add, the output's mul.
  return 3 * device::VectorPasses(VectorKernel::kSigmoid) + 2 * device::VectorPasses(VectorKernel::kTanh) +
         4 * device::VectorPasses(VectorKernel::kMul) + kGates * device::VectorPasses(VectorKernel::kAdd);
}

absl::StatusOr<std::vector<TensorType>> InferLstm(InferContext& c) {
  RnnPlan plan;
  if (auto s = PlanLstm(c, kLstmInputs, plan); !s.ok()) return s;
  std::vector<TensorType> out = RnnOutputTypes(c, plan.s, true);
  c.Prepare(std::move(plan));
  return out;
}

}  // namespace

absl::Status PlanLstm(InferContext& c, int inputs, RnnPlan& plan) {
  auto input_forget = c.attrs.Int("input_forget", 0);
  if (!input_forget.ok()) return input_forget.status();
  if (*input_forget != 0) return NodeError(c.node, "attribute \"input_forget\" = 1 is not supported");
  if (auto s = PlanRnn(c, kGates, GatePasses(), inputs, plan); !s.ok()) return s;
  plan.folded_rb_rows = plan.s.gate_width();  // every gate's Rb adds to its Wb
  return absl::OkStatus();
}

void LstmStep(const RnnPlan& plan, RnnDirection& dir, int64_t t, const float* peep, float* hs, float* cs, float* gates,
              uint8_t* clipped) {
  const RnnShape& s = plan.s;
  const kernels::VectorKernelSet& vk = kernels::VectorKernels();
  const int64_t h = s.hidden, gw = s.gate_width();
  dir.Recurrent(hs, 0, gw, gates);
  const float* xw = dir.projected(t);
  for (int64_t b = 0; b < s.batch; ++b) {
    if (!dir.active(b, t)) continue;
    float* gb = gates + b * gw;
    float* cb = cs + b * h;
    for (int64_t j = 0; j < gw; ++j) gb[j] += xw[b * gw + j];
    ClipPreActivations(plan.clip, gb, gw, clipped == nullptr ? nullptr : clipped + b * gw);
    float* gi = gb;
    float* go = gb + h;
    float* gf = gb + 2 * h;
    float* gc = gb + 3 * h;
    for (int64_t j = 0; j < h; ++j) {
      gi[j] += peep[j] * cb[j];
      gf[j] += peep[2 * h + j] * cb[j];
    }
    vk.unary(kernels::UnaryOp::kSigmoid, {}, kernels::F32Src(gi), kernels::F32Dst(gi), h, false);
    vk.unary(kernels::UnaryOp::kSigmoid, {}, kernels::F32Src(gf), kernels::F32Dst(gf), h, false);
    vk.unary(kernels::UnaryOp::kTanh, {}, kernels::F32Src(gc), kernels::F32Dst(gc), h, false);
    for (int64_t j = 0; j < h; ++j) {
      cb[j] = gf[j] * cb[j] + gi[j] * gc[j];
      go[j] += peep[h + j] * cb[j];
    }
    vk.unary(kernels::UnaryOp::kSigmoid, {}, kernels::F32Src(go), kernels::F32Dst(go), h, false);
    float* hb = hs + b * h;
    vk.unary(kernels::UnaryOp::kTanh, {}, kernels::F32Src(cb), kernels::F32Dst(hb), h, false);
    for (int64_t j = 0; j < h; ++j) hb[j] *= go[j];
  }
}

namespace {

absl::Status RunLstm(RunContext& ctx) {
  const RnnPlan& plan = ctx.State<RnnPlan>();
  const RnnShape& s = plan.s;
  if (auto st = CheckSequenceLens(ctx, s.seq, s.batch); !st.ok()) return st;
  uint64_t overflow = 0;
  for (int64_t d = 0; d < s.dirs; ++d) {
    RnnDirection dir(ctx, plan, d);
    std::vector<float> hs = dir.InitialState(kRnnInitialH), cs = dir.InitialState(kRnnInitialC);
    const std::vector<float> p = LstmPeepholes(ctx, s, d);
    std::vector<float> g(static_cast<size_t>(s.batch * s.gate_width()));
    for (int64_t i = 0; i < s.seq; ++i) {
      if (ctx.cancel != nullptr && ctx.cancel->load(std::memory_order_relaxed)) break;  // the executor reports it
      const int64_t t = dir.step(i);
      LstmStep(plan, dir, t, p.data(), hs.data(), cs.data(), g.data(), nullptr);
      dir.StoreStep(t, hs.data());
    }
    dir.StoreFinal(1, hs);
    dir.StoreFinal(2, cs);
    overflow += dir.overflow();
  }
  SetCubeWork(ctx, plan.work, overflow);
  return absl::OkStatus();
}

}  // namespace

void RegisterLstmOp(OpRegistry& r) {
  OpDef d = RnnOpDef("LSTM", kLstmInputs, 3, LstmAttribute());
  d.infer = InferLstm;
  d.run = RunLstm;
  r.Register(std::move(d));
}

}  // namespace npu::graph::ops
