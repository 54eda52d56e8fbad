// LSTM (ONNX opset 14, layout 0; torch's nn.LSTM exports one per layer):
// gates in ONNX's order i, o, f, c (W, R and B rows), peepholes P optional,
// activations the defaults (sigmoid, tanh, tanh):
//   i = s(x Wi + h Ri + Wbi + Rbi + Pi . c)      f = s(... f ... + Pf . c)
//   g = tanh(x Wc + h Rc + Wbc + Rbc)            c' = f . c + i . g
//   o = s(x Wo + h Ro + Wbo + Rbo + Po . c')     h' = o . tanh(c')
// The projections on the Cube, the gates on the Vector unit in fp32
// (rnn_common.h); c and h stay fp32 between steps, outputs rounded once.
#include <algorithm>
#include <vector>

#include "kernels/vector_kernels.h"
#include "server/device/vector_passes.h"
#include "server/graph/element_access.h"
#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/cube_problem.h"
#include "server/graph/ops/rnn_common.h"

namespace npu::graph::ops {
namespace {

constexpr int kInitialH = 5, kInitialC = 6, kPeepholes = 7;
constexpr int64_t kGates = 4;

int64_t GatePasses() {
  using device::VectorKernel;
  // Per hidden element: three sigmoids, two tanh, the cell's two mul + add, the output's mul.
  return 3 * device::VectorPasses(VectorKernel::kSigmoid) + 2 * device::VectorPasses(VectorKernel::kTanh) +
         4 * device::VectorPasses(VectorKernel::kMul) + kGates * device::VectorPasses(VectorKernel::kAdd);
}

absl::StatusOr<std::vector<TensorType>> InferLstm(InferContext& c) {
  auto input_forget = c.attrs.Int("input_forget", 0);
  if (!input_forget.ok()) return input_forget.status();
  if (*input_forget != 0) return NodeError(c.node, "attribute \"input_forget\" = 1 is not supported");
  RnnPlan plan;
  if (auto s = PlanRnn(c, kGates, GatePasses(), plan); !s.ok()) return s;
  plan.folded_rb_rows = plan.s.gate_width();  // every gate's Rb adds to its Wb
  std::vector<TensorType> out = RnnOutputTypes(c, plan.s, true);
  c.Prepare(std::move(plan));
  return out;
}

absl::Status RunLstm(RunContext& ctx) {
  const RnnPlan& plan = ctx.State<RnnPlan>();
  const RnnShape& s = plan.s;
  if (auto st = CheckSequenceLens(ctx, s.seq, s.batch); !st.ok()) return st;
  const kernels::VectorKernelSet& vk = kernels::VectorKernels();
  const int64_t h = s.hidden, gw = s.gate_width();
  const HostTensor* peep = static_cast<int>(ctx.inputs.size()) > kPeepholes ? ctx.inputs[kPeepholes] : nullptr;
  uint64_t overflow = 0;
  for (int64_t d = 0; d < s.dirs; ++d) {
    RnnDirection dir(ctx, plan, d);
    std::vector<float> hs = dir.InitialState(kInitialH), cs = dir.InitialState(kInitialC);
    std::vector<float> p(static_cast<size_t>(3 * h), 0.0f);  // Pi, Po, Pf
    if (peep != nullptr) LoadAsFloat(*peep, d * 3 * h, 1, 3 * h, p.data());
    std::vector<float> g(static_cast<size_t>(s.batch * gw)), act(static_cast<size_t>(h));
    for (int64_t i = 0; i < s.seq; ++i) {
      if (ctx.cancel != nullptr && ctx.cancel->load(std::memory_order_relaxed)) break;  // the executor reports it
      const int64_t t = dir.step(i);
      dir.Recurrent(hs.data(), 0, gw, g.data());
      const float* xw = dir.projected(t);
      for (int64_t b = 0; b < s.batch; ++b) {
        if (!dir.active(b, t)) continue;
        float* gb = g.data() + b * gw;
        float* cb = cs.data() + b * h;
        for (int64_t j = 0; j < gw; ++j) gb[j] += xw[b * gw + j];
        if (plan.clip > 0) {
          for (int64_t j = 0; j < gw; ++j) gb[j] = std::clamp(gb[j], -plan.clip, plan.clip);
        }
        float* gi = gb;
        float* go = gb + h;
        float* gf = gb + 2 * h;
        float* gc = gb + 3 * h;
        for (int64_t j = 0; j < h; ++j) {
          gi[j] += p[j] * cb[j];
          gf[j] += p[2 * h + j] * cb[j];
        }
        vk.unary(kernels::UnaryOp::kSigmoid, {}, kernels::F32Src(gi), kernels::F32Dst(gi), h, false);
        vk.unary(kernels::UnaryOp::kSigmoid, {}, kernels::F32Src(gf), kernels::F32Dst(gf), h, false);
        vk.unary(kernels::UnaryOp::kTanh, {}, kernels::F32Src(gc), kernels::F32Dst(gc), h, false);
        for (int64_t j = 0; j < h; ++j) {
          cb[j] = gf[j] * cb[j] + gi[j] * gc[j];
          go[j] += p[h + j] * cb[j];
        }
        vk.unary(kernels::UnaryOp::kSigmoid, {}, kernels::F32Src(go), kernels::F32Dst(go), h, false);
        vk.unary(kernels::UnaryOp::kTanh, {}, kernels::F32Src(cb), kernels::F32Dst(act.data()), h, false);
        for (int64_t j = 0; j < h; ++j) hs[b * h + j] = go[j] * act[j];
      }
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
  OpDef d = RnnOpDef("LSTM", 8, 3, {"input_forget", AttrKind::kInt});
  d.infer = InferLstm;
  d.run = RunLstm;
  r.Register(std::move(d));
}

}  // namespace npu::graph::ops
