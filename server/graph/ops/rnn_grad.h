// What LSTMGrad and GRUGrad share. Both take the forward op's inputs, then
// the gradients of its outputs (dY, dY_h[, dY_c]; "" for one that gets none),
// and give dX, dW, dR, dB, d initial_h (LSTM: then d initial_c, dP), each of
// its input's type. The way a Da Vinci core runs them (CANN's DynamicRNNGrad /
// DynamicGRUV2Grad): per direction, the forward re-run and recorded, then
// backwards in time the gates' gradients on the Vector unit in fp32 and
// dh_prev = dA R on the Cube; then, over the whole sequence at once, three
// Cube GEMMs: dW = dA^T X, dX = dA W and dR = dA^T H (H: the state each step
// read), and the bias gradients as column sums of dA.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "server/graph/op_registry.h"
#include "server/graph/ops/rnn_common.h"

namespace npu::graph::ops {

// The outputs both give.
inline constexpr int kGradX = 0, kGradW = 1, kGradR = 2, kGradB = 3, kGradInitialH = 4;

struct RnnGradPlan {
  RnnPlan fwd;
  int forward_inputs = 0;  // where the output gradients start
  bool cell_state = false;  // LSTM: dY_c, d initial_c and dP too
  device::OpWork work;  // the re-run forward, the way back, the sequence-wide GEMMs
};

// After the cell's plan of the first plan.forward_inputs inputs: checks the
// output gradients against the forward's outputs and returns the gradients'
// types; adds the backward's device work to plan.work (`passes`: Vector
// instructions per hidden element and step). Prepares `plan`.
absl::StatusOr<std::vector<TensorType>> InferRnnGrad(InferContext& c, int64_t passes, RnnGradPlan plan);

// One direction's gradient: what its backward loop writes per time step t
// (X's order) and the sequence-wide products that follow.
class RnnGradDirection {
 public:
  RnnGradDirection(RunContext& ctx, const RnnGradPlan& plan, int64_t d);

  // Row b of step t's dA (the pre-activations' gradient, [gates x hidden]):
  // the input projection's, and the recurrence's (R and Rb): da itself but
  // for GRU with linear_before_reset, whose h gate's is r . dA.
  float* da(int64_t t, int64_t b) { return da_.data() + (t * s_.batch + b) * s_.gate_width(); }
  float* da_rec(int64_t t, int64_t b);
  const float* da_rec_step(int64_t t);  // rows of step t, row length gates x hidden
  // The operand R's rows meet in dR: the state step t read, per row, and
  // (GRU, linear_before_reset 0 only) r . h for the rows of h's gate.
  float* h_prev(int64_t t) { return h_prev_.data() + t * s_.batch * s_.hidden; }
  float* rh_prev(int64_t t);

  // The output gradient `input` (dY_h or dY_c) of this direction as fp32
  // [batch, hidden], zeros when absent.
  std::vector<float> FinalGradient(int input) const;
  // dh (fp32 [batch, hidden]) += dY[t, d] on the rows active at t.
  void AddStepGradient(RnnDirection& dir, int64_t t, float* dh);

  // After the loop: dW, dR and dB of this direction stored, dA W added to
  // dx (fp32 [seq, batch, input]); d initial_h stored from dh. Returns the
  // overflow count of the GEMMs and the stores.
  uint64_t Finish(const std::vector<float>& dh, std::vector<float>& dx);

 private:
  RunContext& ctx_;
  const RnnGradPlan& plan_;
  const RnnShape& s_;
  int64_t d_;
  std::vector<float> da_, da_rec_, h_prev_, rh_prev_;
  std::vector<float> step_dy_;  // AddStepGradient's scratch
};

// The frame both gradients run in: checks sequence_lens, then per direction
// `direction` (the re-run, the way back, grad.Finish; it returns the overflow
// it counted, early when ctx.cancel is set), then stores dX and the op's work.
using RnnGradBody = std::function<uint64_t(RnnDirection& dir, RnnGradDirection& grad, std::vector<float>& dx)>;
absl::Status RunRnnGrad(RunContext& ctx, const RnnGradBody& direction);

// Whether the caller gave up (the executor reports it).
inline bool Cancelled(const RunContext& ctx) {
  return ctx.cancel != nullptr && ctx.cancel->load(std::memory_order_relaxed);
}

// Stores v into the gradient `output` from element `at`, when the node
// defines that output; returns the overflow count.
uint64_t StoreGradient(RunContext& ctx, int output, int64_t at, const std::vector<float>& v);

// The OpDef both gradients share (the forward's attributes, `inputs` of the
// forward's then its outputs' gradients, `outputs` gradients).
OpDef RnnGradOpDef(std::string name, int inputs, int outputs, AttrDef own);

}  // namespace npu::graph::ops
