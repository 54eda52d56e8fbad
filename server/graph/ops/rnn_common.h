// What LSTM and GRU (ONNX, layout 0) share: their inputs X [seq, batch,
// input], W [dirs, gates x hidden, input], R [dirs, gates x hidden, hidden],
// B [dirs, 2 x gates x hidden], sequence_lens [batch], initial_h [dirs, batch,
// hidden]; outputs Y [seq, dirs, batch, hidden], Y_h [dirs, batch, hidden]
// (and LSTM's Y_c); directions forward, reverse, bidirectional.
//
// How a Da Vinci core runs them (CANN's DynamicRNN / DynamicGRUV2): the input
// projection X W^T of every step as one Cube GEMM per direction, then per step
// the recurrent GEMM H R^T on the Cube (H rounded to fp16 as every Cube
// operand; the state itself stays fp32), the gates on the Vector unit in fp32.
// With sequence_lens, batch row b runs steps t < len[b] (the reverse direction
// from len[b] - 1 down): its later Y rows are 0 and its state stops there.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "server/device/tile_work.h"
#include "server/graph/op_registry.h"

namespace npu::graph::ops {

// Input positions of both ops (LSTM's initial_c and P after initial_h).
inline constexpr int kRnnX = 0, kRnnW = 1, kRnnR = 2, kRnnB = 3, kRnnSeqLens = 4, kRnnInitialH = 5, kRnnInitialC = 6,
                     kRnnPeepholes = 7;

struct RnnShape {
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1, gates = 4;
  bool reverse = false;  // direction "reverse" (one direction, run backwards)
  int64_t gate_width() const { return gates * hidden; }
};

struct RnnPlan {
  RnnShape s;
  float clip = 0.0f;  // > 0: pre-activations clamped to [-clip, clip]
  bool linear_before_reset = false;  // GRU
  int64_t folded_rb_rows = 0;  // gate rows [0, this) whose recurrent bias Rb is added with Wb to X W^T
  device::OpWork work;  // the Cube's GEMMs and the gates' Vector passes (shapes alone decide them)
};

// Checks the first `inputs` inputs (the forward op's; a gradient op's follow)
// and the common attributes (direction, hidden_size, clip, layout; other
// activations than the defaults are refused by the schema) for an op of
// `gates` gates whose gate math takes `passes` Vector instructions per hidden
// element and step; fills plan.s, plan.clip and plan.work.
// INVALID_ARGUMENT naming the node, input or attribute.
absl::Status PlanRnn(InferContext& c, int64_t gates, int64_t passes, int inputs, RnnPlan& plan);

// The inputs' sequence_lens each in [0, seq], or INVALID_ARGUMENT naming the entry.
absl::Status CheckSequenceLens(const RunContext& ctx, int64_t seq, int64_t batch);

// The OpDef both share: FLOAT16/FLOAT32, inputs X, W, R and up to
// `max_inputs`, `num_outputs` outputs, the common attributes and `own`.
OpDef RnnOpDef(std::string name, int max_inputs, int num_outputs, AttrDef own);

// Y, Y_h (and Y_c when `cell_state`) for the node's outputs.
std::vector<TensorType> RnnOutputTypes(const InferContext& c, const RnnShape& s, bool cell_state);

// Clamps v[0, len) to [-clip, clip] when clip > 0; `clipped`, when given,
// receives 1 where a value was outside (its derivative is 0), else 0.
void ClipPreActivations(float clip, float* v, int64_t len, uint8_t* clipped);

// LSTM's peepholes Pi, Po, Pf of direction d as fp32 (3 x hidden), zeros without P.
std::vector<float> LstmPeepholes(const RunContext& ctx, const RnnShape& s, int64_t d);

// One direction's run: the projections, the state, the steps.
class RnnDirection {
 public:
  RnnDirection(RunContext& ctx, const RnnPlan& plan, int64_t dir);

  int64_t index() const { return dir_; }
  // The time steps in this direction's order.
  int64_t step(int64_t i) const { return reverse_ ? plan_.s.seq - 1 - i : i; }
  // Whether batch row b runs step t (sequence_lens).
  bool active(int64_t b, int64_t t) const { return t < lens_[static_cast<size_t>(b)]; }
  // X_t W^T + Wb (+ Rb for the rows plan.folded_rb_rows says), [batch, gates x hidden], fp32.
  const float* projected(int64_t t) const { return xw_.data() + t * plan_.s.batch * plan_.s.gate_width(); }
  // out[batch, cols] = a[batch, hidden] R^T for rows [r0, r0 + cols) of R, on the Cube (a rounded to fp16).
  void Recurrent(const float* a, int64_t r0, int64_t cols, float* out);
  // The gradient's way back: out[batch, hidden] = da[batch, rows] (row
  // length lda) times rows [r0, r0 + rows) of R, on the Cube.
  void RecurrentBack(const float* da, int64_t lda, int64_t r0, int64_t rows, float* out);
  // The recurrent bias of gate row j (Rb).
  float rb(int64_t j) const { return rb_[static_cast<size_t>(j)]; }
  // The initial state `input` ([dirs, batch, hidden]) of this direction, or zeros.
  std::vector<float> InitialState(int input) const;
  // Writes this direction's step output h (Y[t, dir]) and, at the end, Y_h / Y_c.
  void StoreStep(int64_t t, const float* h);
  void StoreFinal(int output, const std::vector<float>& state);
  uint64_t overflow() const { return overflow_; }

 private:
  RunContext& ctx_;
  const RnnPlan& plan_;
  int64_t dir_;
  bool reverse_;
  std::vector<int64_t> lens_;
  std::vector<float> xw_, rb_;
  uint64_t overflow_ = 0;
};

}  // namespace npu::graph::ops
