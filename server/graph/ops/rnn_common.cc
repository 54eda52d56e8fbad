#include "absl/strings/str_cat.h"
#include "server/graph/ops/rnn_common.h"

#include <algorithm>

#include "kernels/cube_gemm.h"
#include "server/graph/element_access.h"
#include "server/graph/node_error.h"
#include "server/graph/ops/cube_problem.h"
#include "server/graph/shape_math.h"
#include "server/graph/vector_tiling.h"

namespace npu::graph::ops {
namespace {

constexpr int kX = kRnnX, kW = kRnnW, kR = kRnnR, kB = kRnnB, kSeqLens = kRnnSeqLens;

const TensorType* Optional(const InferContext& c, int i) {
  return static_cast<int>(c.inputs.size()) > i ? c.inputs[static_cast<size_t>(i)] : nullptr;
}

absl::Status ExpectShape(const InferContext& c, int i, const Shape& want) {
  const TensorType* t = Optional(c, i);
  if (t == nullptr || t->shape == want) return absl::OkStatus();
  return NodeError(c.node, InputLabel(c.node, i), " ", ToString(*t), " must be ", ShapeToString(want));
}

}  // namespace

absl::Status PlanRnn(InferContext& c, int64_t gates, int64_t passes, int inputs, RnnPlan& plan) {
  const TensorType& x = *c.inputs[kX];
  const int given = std::min(inputs, static_cast<int>(c.inputs.size()));
  for (int i = 0; i < given; ++i) {
    if (c.inputs[i] == nullptr || i == kSeqLens) continue;
    if (!IsFloat(c.inputs[i]->dtype) || c.inputs[i]->dtype != x.dtype) {
      return NodeError(c.node, InputLabel(c.node, i), ": dtype ", DataTypeName(c.inputs[i]->dtype),
                       " must be FLOAT16 or FLOAT32 and match input X");
    }
  }
  if (const TensorType* l = Optional(c, kSeqLens); l != nullptr && l->dtype != v1::INT32 && l->dtype != v1::INT64) {
    return NodeError(c.node, InputLabel(c.node, kSeqLens), ": dtype ", DataTypeName(l->dtype), " must be INT32 or INT64");
  }
  auto layout = c.attrs.Int("layout", 0);
  auto direction = c.attrs.String("direction", "forward");
  auto clip = c.attrs.Float("clip", 0.0f);
  for (const absl::Status& st : {layout.status(), direction.status(), clip.status()}) {
    if (!st.ok()) return st;
  }
  if (*layout != 0) return NodeError(c.node, "attribute \"layout\" = ", *layout, " is not supported (0: [seq, batch, ...])");
  if (!(*clip >= 0.0f)) return NodeError(c.node, "attribute \"clip\" = ", *clip, " must be >= 0");
  RnnShape& s = plan.s;
  s.gates = gates;
  s.dirs = *direction == "bidirectional" ? 2 : 1;
  s.reverse = *direction == "reverse";
  if (x.shape.size() != 3) return NodeError(c.node, "input X ", ToString(x), " must be [seq, batch, input]");
  s.seq = x.shape[0], s.batch = x.shape[1], s.input = x.shape[2];
  if (s.input == 0) return NodeError(c.node, "input X ", ToString(x), ": only the sequence and the batch may be empty");
  const Shape& w = c.inputs[kW]->shape;
  if (w.size() != 3 || w[0] != s.dirs || w[2] != s.input || w[1] % gates != 0) {
    return NodeError(c.node, InputLabel(c.node, kW), " ", ToString(*c.inputs[kW]), " must be [", s.dirs, ", ", gates,
                     " x hidden_size, ", s.input, "] (direction ", *direction, ", input X ", ToString(x), ")");
  }
  auto hidden = c.attrs.Int("hidden_size", w[1] / gates);
  if (!hidden.ok()) return hidden.status();
  if (*hidden < 1 || *hidden != w[1] / gates) {  // (not hidden * gates: a huge hidden_size would overflow)
    return NodeError(c.node, "attribute \"hidden_size\" = ", *hidden, " does not match ", InputLabel(c.node, kW), " ",
                     ToString(*c.inputs[kW]), " (", gates, " gates)");
  }
  s.hidden = *hidden;
  if (auto st = ExpectShape(c, kR, {s.dirs, gates * s.hidden, s.hidden}); !st.ok()) return st;
  if (auto st = ExpectShape(c, kB, {s.dirs, 2 * gates * s.hidden}); !st.ok()) return st;
  if (auto st = ExpectShape(c, kSeqLens, {s.batch}); !st.ok()) return st;
  for (int i = kSeqLens + 1; i < given; ++i) {  // initial_h, initial_c, P
    const bool peephole = i == kRnnPeepholes;
    if (auto st = ExpectShape(c, i, peephole ? Shape{s.dirs, 3 * s.hidden} : Shape{s.dirs, s.batch, s.hidden});
        !st.ok()) {
      return st;
    }
  }
  plan.clip = *clip;
  // The chip's work per direction: the input projection, one recurrent GEMM per step, the gates.
  const int64_t gw = s.gate_width();
  auto proj = PlanCubeModel(c, 1, s.seq * s.batch, gw, s.input);
  if (!proj.ok()) return proj.status();
  auto rec = PlanCubeModel(c, 1, s.batch, gw, s.hidden);
  if (!rec.ok()) return rec.status();
  const long double tiles = static_cast<long double>(s.dirs) * (ModeledCubeTiles(*proj, 1, s.seq * s.batch, gw) +
                                                               s.seq * ModeledCubeTiles(*rec, 1, s.batch, gw));
  if (auto st = CheckModeledCubeTiles(c, tiles, absl::StrCat("its ", s.dirs * s.seq, " recurrent steps"));
      !st.ok()) {
    return st;
  }
  const kernels::ElemType f32 = kernels::ElemType::kFloat32;
  for (int64_t d = 0; d < s.dirs && s.seq * s.batch > 0; ++d) {
    AppendModelGemm(s.seq * s.batch, gw, s.input, f32, *proj, 2 * d, 2 * d + 1, *c.preset, plan.work);
    for (int64_t t = 0; t < s.seq; ++t) {
      AppendModelGemm(s.batch, gw, s.hidden, f32, *rec, 0, 2 * d + 1, *c.preset, plan.work);
    }
  }
  const int64_t elements = s.dirs * s.seq * s.batch * s.hidden;
  plan.work.tiles.push_back(VectorChunkWork(elements, elements * gates * 4, elements * 4, 4, passes));
  return absl::OkStatus();
}

OpDef RnnOpDef(std::string name, int max_inputs, int num_outputs, AttrDef own) {
  OpDef d;
  d.name = std::move(name);
  d.units = "Cube, MTE1, MTE2, FixPipe (projections); Vector (gates)";
  d.task_type = device::TaskType::kAiCore;
  d.dtypes = {v1::FLOAT16, v1::FLOAT32};
  d.min_inputs = 3;
  d.max_inputs = max_inputs;
  d.num_outputs = num_outputs;
  d.attributes = {{"clip", AttrKind::kFloat},
                  {"direction", AttrKind::kString, {"forward", "reverse", "bidirectional"}},
                  {"hidden_size", AttrKind::kInt},
                  {"layout", AttrKind::kInt},
                  std::move(own)};
  return d;
}

std::vector<TensorType> RnnOutputTypes(const InferContext& c, const RnnShape& s, bool cell_state) {
  const DataType dt = c.inputs[kX]->dtype;
  std::vector<TensorType> out{{dt, {s.seq, s.dirs, s.batch, s.hidden}}, {dt, {s.dirs, s.batch, s.hidden}}};
  if (cell_state) out.push_back({dt, {s.dirs, s.batch, s.hidden}});
  return out;
}

absl::Status CheckSequenceLens(const RunContext& ctx, int64_t seq, int64_t batch) {
  const HostTensor* l = ctx.inputs.size() > kSeqLens ? ctx.inputs[kSeqLens] : nullptr;
  if (l == nullptr) return absl::OkStatus();
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t n = l->type().dtype == v1::INT32 ? l->as<int32_t>()[b] : l->as<int64_t>()[b];
    if (n < 0 || n > seq) {
      return NodeError(ctx.node, InputLabel(ctx.node, kSeqLens), "[", b, "] = ", n, " is outside [0, ", seq, "]");
    }
  }
  return absl::OkStatus();
}

void ClipPreActivations(float clip, float* v, int64_t len, uint8_t* clipped) {
  if (!(clip > 0)) return;
  for (int64_t j = 0; j < len; ++j) {
    if (clipped != nullptr) clipped[j] = v[j] < -clip || v[j] > clip;
    v[j] = std::clamp(v[j], -clip, clip);
  }
}

std::vector<float> LstmPeepholes(const RunContext& ctx, const RnnShape& s, int64_t d) {
  std::vector<float> p(static_cast<size_t>(3 * s.hidden), 0.0f);
  const HostTensor* t = static_cast<int>(ctx.inputs.size()) > kRnnPeepholes ? ctx.inputs[kRnnPeepholes] : nullptr;
  if (t != nullptr) LoadAsFloat(*t, d * 3 * s.hidden, 1, 3 * s.hidden, p.data());
  return p;
}

RnnDirection::RnnDirection(RunContext& ctx, const RnnPlan& plan, int64_t dir)
    : ctx_(ctx), plan_(plan), dir_(dir), reverse_(plan.s.reverse || dir == 1) {
  const RnnShape& s = plan.s;
  const int64_t gw = s.gate_width();
  lens_.assign(static_cast<size_t>(s.batch), s.seq);
  const HostTensor* l = ctx.inputs.size() > kSeqLens ? ctx.inputs[kSeqLens] : nullptr;
  for (int64_t b = 0; l != nullptr && b < s.batch; ++b) {
    lens_[static_cast<size_t>(b)] = l->type().dtype == v1::INT32 ? l->as<int32_t>()[b] : l->as<int64_t>()[b];
  }
  // Wb + Rb (Rb only for the rows it folds into).
  std::vector<float> bias(static_cast<size_t>(gw), 0.0f);
  rb_.assign(static_cast<size_t>(gw), 0.0f);
  const HostTensor* b = ctx.inputs.size() > kB ? ctx.inputs[kB] : nullptr;
  if (b != nullptr) {
    std::vector<float> wr(static_cast<size_t>(2 * gw));
    LoadAsFloat(*b, dir * 2 * gw, 1, 2 * gw, wr.data());
    for (int64_t j = 0; j < gw; ++j) {
      rb_[j] = wr[gw + j];
      bias[j] = j < plan.folded_rb_rows ? wr[j] + wr[gw + j] : wr[j];
    }
  }
  // X W^T for every step at once (one Cube GEMM), fp32 out, then the bias.
  xw_.assign(static_cast<size_t>(s.seq * s.batch * gw), 0.0f);
  if (s.seq * s.batch == 0) return;
  const HostTensor& x = *ctx.inputs[kX];
  const HostTensor& w = *ctx.inputs[kW];
  kernels::GemmProblem p = CubeProblem(ctx, x.type().dtype, w.type().dtype, v1::FLOAT32);
  p.m = s.seq * s.batch, p.n = gw, p.k = s.input;
  p.a = x.data(), p.lda = s.input;
  p.b = w.data() + dir * gw * s.input * static_cast<int64_t>(ElementSize(w.type().dtype));
  p.ldb = s.input, p.trans_b = true;
  p.bias = bias.data();
  p.c = xw_.data(), p.ldc = gw;
  overflow_ += RunCubeGemm(p);
}

void RnnDirection::Recurrent(const float* a, int64_t r0, int64_t cols, float* out) {
  const RnnShape& s = plan_.s;
  if (s.batch == 0) return;
  const HostTensor& r = *ctx_.inputs[kR];
  kernels::GemmProblem p = CubeProblem(ctx_, v1::FLOAT32, r.type().dtype, v1::FLOAT32);
  p.m = s.batch, p.n = cols, p.k = s.hidden;
  p.a = a, p.lda = s.hidden;
  p.b = r.data() + (dir_ * s.gate_width() + r0) * s.hidden * static_cast<int64_t>(ElementSize(r.type().dtype));
  p.ldb = s.hidden, p.trans_b = true;
  p.c = out, p.ldc = cols;
  overflow_ += RunCubeGemm(p);
}

void RnnDirection::RecurrentBack(const float* da, int64_t lda, int64_t r0, int64_t rows, float* out) {
  const RnnShape& s = plan_.s;
  if (s.batch == 0) return;
  const HostTensor& r = *ctx_.inputs[kR];
  kernels::GemmProblem p = CubeProblem(ctx_, v1::FLOAT32, r.type().dtype, v1::FLOAT32);
  p.m = s.batch, p.n = s.hidden, p.k = rows;
  p.a = da, p.lda = lda;
  p.b = r.data() + (dir_ * s.gate_width() + r0) * s.hidden * static_cast<int64_t>(ElementSize(r.type().dtype));
  p.ldb = s.hidden;
  p.c = out, p.ldc = s.hidden;
  overflow_ += RunCubeGemm(p);
}

std::vector<float> RnnDirection::InitialState(int input) const {
  const RnnShape& s = plan_.s;
  std::vector<float> state(static_cast<size_t>(s.batch * s.hidden), 0.0f);
  const HostTensor* t = static_cast<int>(ctx_.inputs.size()) > input ? ctx_.inputs[static_cast<size_t>(input)] : nullptr;
  if (t != nullptr) LoadAsFloat(*t, dir_ * s.batch * s.hidden, 1, s.batch * s.hidden, state.data());
  return state;
}

void RnnDirection::StoreStep(int64_t t, const float* h) {
  if (ctx_.outputs.empty()) return;
  const RnnShape& s = plan_.s;
  const HostTensor& y = ctx_.outputs[0];
  const std::vector<float> zeros(static_cast<size_t>(s.hidden), 0.0f);
  for (int64_t b = 0; b < s.batch; ++b) {
    const int64_t at = ((t * s.dirs + dir_) * s.batch + b) * s.hidden;
    overflow_ += StoreFromFloat(y, at, s.hidden, active(b, t) ? h + b * s.hidden : zeros.data(),
                                ctx_.preset.fp16_saturation);
  }
}

void RnnDirection::StoreFinal(int output, const std::vector<float>& state) {
  if (static_cast<int>(ctx_.outputs.size()) <= output) return;
  const RnnShape& s = plan_.s;
  overflow_ += StoreFromFloat(ctx_.outputs[static_cast<size_t>(output)], dir_ * s.batch * s.hidden,
                              s.batch * s.hidden, state.data(), ctx_.preset.fp16_saturation);
}

}  // namespace npu::graph::ops
