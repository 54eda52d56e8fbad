// One time step of each recurrent cell, shared by the forward ops (lstm_op.cc,
// gru_op.cc) and their gradients (rnn_grad_ops.cc), which re-run the
// recurrence to record what the step computed, as BatchNormalizationGrad
// recomputes its statistics: the forward graph stays the inference graph and
// the recorded values are the forward's, bit for bit.
#pragma once

#include <cstdint>

#include "server/graph/ops/rnn_common.h"

namespace npu::graph::ops {

inline constexpr int kLstmInputs = 8, kGruInputs = 6;  // the forward ops' inputs (a gradient's come after)

// Each cell's own attribute, beside the common ones (RnnOpDef).
inline AttrDef LstmAttribute() { return {"input_forget", AttrKind::kInt}; }
inline AttrDef GruAttribute() { return {"linear_before_reset", AttrKind::kInt}; }

// PlanRnn for the cell, with its own attribute: the first `inputs` inputs of
// the node are the forward op's.
absl::Status PlanLstm(InferContext& c, int inputs, RnnPlan& plan);
absl::Status PlanGru(InferContext& c, int inputs, RnnPlan& plan);

// LSTM's step t of `dir`: updates hs and cs ([batch, hidden], fp32) of the
// rows active at t. `gates` ([batch, 4 x hidden]) ends holding the active
// rows' activations i, o, f, g (ONNX's row order); `peep` is Pi, Po, Pf
// (3 x hidden, zeros without P). `clipped`, when given and plan.clip > 0,
// receives 1 where a gate's pre-activation was clamped.
void LstmStep(const RnnPlan& plan, RnnDirection& dir, int64_t t, const float* peep, float* hs, float* cs, float* gates,
              uint8_t* clipped);

// GRU's step t of `dir`: updates hs of the rows active at t. `gates`
// ([batch, ld], ld = 3 x hidden with linear_before_reset, else 2 x hidden)
// ends holding z and r (activations) and, with linear_before_reset, h Rh
// (without Rbh); `n` ([batch, hidden]) the candidate tanh(...); `rh`
// ([batch, hidden]) r . h of the step's input state (linear_before_reset 0).
// `clipped` ([batch, 3 x hidden]) as LSTM's: z, r, then n.
void GruStep(const RnnPlan& plan, RnnDirection& dir, int64_t t, float* hs, float* gates, float* n, float* rh,
             uint8_t* clipped);

}  // namespace npu::graph::ops
