#include "absl/strings/str_cat.h"
#include "server/graph/ops/rnn_grad.h"

#include <utility>

#include "kernels/cube_gemm.h"
#include "server/graph/element_access.h"
#include "server/graph/node_error.h"
#include "server/graph/ops/cube_problem.h"
#include "server/graph/shape_math.h"
#include "server/graph/vector_tiling.h"

namespace npu::graph::ops {
namespace {

const TensorType* Optional(const InferContext& c, int i) {
  return static_cast<int>(c.inputs.size()) > i ? c.inputs[static_cast<size_t>(i)] : nullptr;
}

const HostTensor* Optional(const RunContext& ctx, int i) {
  return static_cast<int>(ctx.inputs.size()) > i ? ctx.inputs[static_cast<size_t>(i)] : nullptr;
}

// The sequence-wide GEMMs of a direction, from the shapes: dW, dX, dR.
absl::Status AppendSequenceWork(const InferContext& c, const RnnShape& s, device::OpWork& work) {
  const int64_t gw = s.gate_width(), rows = s.seq * s.batch;
  if (rows == 0) return absl::OkStatus();
  const kernels::ElemType f32 = kernels::ElemType::kFloat32;
  auto back = PlanCubeModel(c, 1, s.batch, s.hidden, gw);
  auto dw = PlanCubeModel(c, 1, gw, s.input, rows);
  auto dx = PlanCubeModel(c, 1, rows, s.input, gw);
  auto dr = PlanCubeModel(c, 1, gw, s.hidden, rows);
  for (const absl::Status& st : {back.status(), dw.status(), dx.status(), dr.status()}) {
    if (!st.ok()) return st;
  }
  const long double tiles = static_cast<long double>(s.dirs) *
                            (s.seq * ModeledCubeTiles(*back, 1, s.batch, s.hidden) + ModeledCubeTiles(*dw, 1, gw, s.input) +
                             ModeledCubeTiles(*dx, 1, rows, s.input) + ModeledCubeTiles(*dr, 1, gw, s.hidden));
  if (auto st = CheckModeledCubeTiles(c, tiles, absl::StrCat("its ", s.dirs * s.seq, " recurrent steps back"));
      !st.ok()) {
    return st;
  }
  uint64_t key = 1000;  // clear of the forward's keys
  for (int64_t d = 0; d < s.dirs; ++d, key += 8) {
    for (int64_t t = 0; t < s.seq; ++t) AppendModelGemm(s.batch, s.hidden, gw, f32, *back, key, key + 1, *c.preset, work);
    AppendModelGemm(gw, s.input, rows, f32, *dw, key + 2, key + 3, *c.preset, work);
    AppendModelGemm(rows, s.input, gw, f32, *dx, key + 2, key + 4, *c.preset, work);
    AppendModelGemm(gw, s.hidden, rows, f32, *dr, key + 2, key + 5, *c.preset, work);
  }
  return absl::OkStatus();
}

// C [m, n] = op(A) B on the Cube, fp32 out; A and B fp32 (rounded to fp16 as
// the Cube's operands) or the tensors' own types.
uint64_t Gemm(const RunContext& ctx, int64_t m, int64_t n, int64_t k, const void* a, DataType at, int64_t lda,
              bool trans_a, const void* b, DataType bt, int64_t ldb, float* c) {
  kernels::GemmProblem p = CubeProblem(ctx, at, bt, v1::FLOAT32);
  p.m = m, p.n = n, p.k = k;
  p.a = a, p.lda = lda, p.trans_a = trans_a;
  p.b = b, p.ldb = ldb;
  p.c = c, p.ldc = n;
  return RunCubeGemm(p);
}

}  // namespace

absl::StatusOr<std::vector<TensorType>> InferRnnGrad(InferContext& c, int64_t passes, RnnGradPlan plan) {
  const RnnShape& s = plan.fwd.s;
  const DataType dt = c.inputs[kRnnX]->dtype;
  const Shape state{s.dirs, s.batch, s.hidden};
  const int grads = plan.cell_state ? 3 : 2;
  for (int k = 0; k < grads; ++k) {
    const int i = plan.forward_inputs + k;
    const TensorType* t = Optional(c, i);
    const Shape want = k == 0 ? Shape{s.seq, s.dirs, s.batch, s.hidden} : state;
    if (t != nullptr && (t->dtype != dt || t->shape != want)) {
      return NodeError(c.node, InputLabel(c.node, i), " ", ToString(*t), " must be ", DataTypeName(dt), " ",
                       ShapeToString(want), ": the gradient of the forward's output ", k);
    }
  }
  auto type_of = [&](int i, Shape fallback) {
    const TensorType* t = Optional(c, i);
    return t != nullptr ? *t : TensorType{dt, std::move(fallback)};
  };
  std::vector<TensorType> out{*c.inputs[kRnnX], *c.inputs[kRnnW], *c.inputs[kRnnR],
                              type_of(kRnnB, {s.dirs, 2 * s.gate_width()}), type_of(kRnnInitialH, state)};
  if (plan.cell_state) {
    out.push_back(type_of(kRnnInitialC, state));
    out.push_back(type_of(kRnnPeepholes, {s.dirs, 3 * s.hidden}));
  }
  plan.work = plan.fwd.work;
  if (auto st = AppendSequenceWork(c, s, plan.work); !st.ok()) return st;
  const int64_t elements = s.dirs * s.seq * s.batch * s.hidden;
  plan.work.tiles.push_back(VectorChunkWork(elements, elements * (s.gates + 2) * 4, elements * 4, 4, passes));
  c.Prepare(std::move(plan));
  return out;
}

RnnGradDirection::RnnGradDirection(RunContext& ctx, const RnnGradPlan& plan, int64_t d)
    : ctx_(ctx), plan_(plan), s_(plan.fwd.s), d_(d) {
  const int64_t rows = s_.seq * s_.batch;
  da_.assign(static_cast<size_t>(rows * s_.gate_width()), 0.0f);
  h_prev_.assign(static_cast<size_t>(rows * s_.hidden), 0.0f);
  // GRU: with linear_before_reset the h gate's recurrence is r . (h Rh + Rbh),
  // its own dA; without, R's h rows meet r . h.
  if (s_.gates == 3 && plan.fwd.linear_before_reset) da_rec_ = da_;
  if (s_.gates == 3 && !plan.fwd.linear_before_reset) rh_prev_ = h_prev_;
}

float* RnnGradDirection::da_rec(int64_t t, int64_t b) {
  std::vector<float>& v = da_rec_.empty() ? da_ : da_rec_;
  return v.data() + (t * s_.batch + b) * s_.gate_width();
}

const float* RnnGradDirection::da_rec_step(int64_t t) { return da_rec(t, 0); }

float* RnnGradDirection::rh_prev(int64_t t) { return rh_prev_.data() + t * s_.batch * s_.hidden; }

std::vector<float> RnnGradDirection::FinalGradient(int input) const {
  std::vector<float> g(static_cast<size_t>(s_.batch * s_.hidden), 0.0f);
  const HostTensor* t = Optional(ctx_, input);
  if (t != nullptr) LoadAsFloat(*t, d_ * s_.batch * s_.hidden, 1, s_.batch * s_.hidden, g.data());
  return g;
}

void RnnGradDirection::AddStepGradient(RnnDirection& dir, int64_t t, float* dh) {
  const HostTensor* dy = Optional(ctx_, plan_.forward_inputs);
  if (dy == nullptr) return;
  const int64_t h = s_.hidden;
  step_dy_.resize(static_cast<size_t>(s_.batch * h));  // dY[t, d]: the batch's rows, one after the other
  LoadAsFloat(*dy, (t * s_.dirs + d_) * s_.batch * h, 1, s_.batch * h, step_dy_.data());
  for (int64_t b = 0; b < s_.batch; ++b) {
    if (!dir.active(b, t)) continue;  // Y is 0 there, whatever the state
    for (int64_t j = 0; j < h; ++j) dh[b * h + j] += step_dy_[b * h + j];
  }
}

uint64_t RnnGradDirection::Finish(const std::vector<float>& dh, std::vector<float>& dx) {
  const int64_t gw = s_.gate_width(), rows = s_.seq * s_.batch, h = s_.hidden, in = s_.input;
  const HostTensor& x = *ctx_.inputs[kRnnX];
  const HostTensor& w = *ctx_.inputs[kRnnW];
  const std::vector<float>& rec = da_rec_.empty() ? da_ : da_rec_;
  std::vector<float> dw(static_cast<size_t>(gw * in), 0.0f), dr(static_cast<size_t>(gw * h), 0.0f);
  std::vector<float> db(static_cast<size_t>(2 * gw), 0.0f);
  uint64_t overflow = 0;
  if (rows > 0) {
    // dW = dA^T X, dR = dA_rec^T H (GRU's h rows: r . H), dX += dA W.
    overflow += Gemm(ctx_, gw, in, rows, da_.data(), v1::FLOAT32, gw, true, x.data(), x.type().dtype, in, dw.data());
    const int64_t split = rh_prev_.empty() ? gw : 2 * h;
    overflow += Gemm(ctx_, split, h, rows, rec.data(), v1::FLOAT32, gw, true, h_prev_.data(), v1::FLOAT32, h, dr.data());
    if (split < gw) {
      overflow += Gemm(ctx_, gw - split, h, rows, rec.data() + split, v1::FLOAT32, gw, true, rh_prev_.data(),
                       v1::FLOAT32, h, dr.data() + split * h);
    }
    std::vector<float> part(static_cast<size_t>(rows * in));
    const std::byte* wd = w.data() + d_ * gw * in * static_cast<int64_t>(ElementSize(w.type().dtype));
    overflow += Gemm(ctx_, rows, in, gw, da_.data(), v1::FLOAT32, gw, false, wd, w.type().dtype, in, part.data());
    for (size_t i = 0; i < part.size(); ++i) dx[i] += part[i];
    // The biases: column sums in (t, b) order, on the Vector unit.
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < gw; ++j) {
        db[j] += da_[r * gw + j];
        db[gw + j] += rec[r * gw + j];
      }
    }
  }
  overflow += StoreGradient(ctx_, kGradW, d_ * gw * in, dw);
  overflow += StoreGradient(ctx_, kGradR, d_ * gw * h, dr);
  overflow += StoreGradient(ctx_, kGradB, d_ * 2 * gw, db);
  overflow += StoreGradient(ctx_, kGradInitialH, d_ * s_.batch * h, dh);
  return overflow;
}

absl::Status RunRnnGrad(RunContext& ctx, const RnnGradBody& direction) {
  const RnnGradPlan& plan = ctx.State<RnnGradPlan>();
  const RnnShape& s = plan.fwd.s;
  if (auto st = CheckSequenceLens(ctx, s.seq, s.batch); !st.ok()) return st;
  std::vector<float> dx(static_cast<size_t>(s.seq * s.batch * s.input), 0.0f);
  uint64_t overflow = 0;
  for (int64_t d = 0; d < s.dirs; ++d) {
    RnnDirection dir(ctx, plan.fwd, d);
    RnnGradDirection grad(ctx, plan, d);
    overflow += direction(dir, grad, dx) + dir.overflow();
  }
  overflow += StoreGradient(ctx, kGradX, 0, dx);
  SetCubeWork(ctx, plan.work, overflow);
  return absl::OkStatus();
}

uint64_t StoreGradient(RunContext& ctx, int output, int64_t at, const std::vector<float>& v) {
  if (static_cast<int>(ctx.outputs.size()) <= output) return 0;
  return StoreFromFloat(ctx.outputs[static_cast<size_t>(output)], at, static_cast<int64_t>(v.size()), v.data(),
                        ctx.preset.fp16_saturation);
}

OpDef RnnGradOpDef(std::string name, int inputs, int outputs, AttrDef own) {
  OpDef d = RnnOpDef(std::move(name), inputs, outputs, std::move(own));
  d.units = "Cube, MTE1, MTE2, FixPipe (the re-run, dA R, dW, dX, dR); Vector (the gates' gradients)";
  return d;
}

}  // namespace npu::graph::ops
