// The optimizers (torch.optim's SGD, SGD with momentum, Adam, AdamW) as
// update nodes of a training step: one SGDUpdate or AdamUpdate per parameter
// (server/graph/ops/optimizer_ops.cc), over its fp32 master copy, with its
// state (velocity; Adam's two moments) as inputs and outputs of the step.
#pragma once

#include <string>
#include <vector>

#include "server/train/graph_editor.h"
#include "server/train/train_config.h"

namespace npu::train {

// State tensors per parameter (fp32, the parameter's shape, zero at the start).
int StateSlots(OptimizerKind kind);
const char* StateSlotName(OptimizerKind kind, int slot);  // "velocity", "exp_avg", "exp_avg_sq"
const char* OptimizerName(OptimizerKind kind);             // "sgd", "momentum", "adam", "adamw"

// The step's scalar inputs the updates read.
struct UpdateScalars {
  std::string lr;          // FLOAT32
  std::string grad_scale;  // FLOAT32: 1 / loss scale
  std::string found_inf;   // FLOAT32: the float status; non-zero skips the update
  std::string step;        // INT64: the update's number, from 1 (Adam's bias corrections)
};

// Appends the update of `master` (FLOAT32) from `grad`; `state` holds the
// StateSlots(kind) state inputs. Returns the updated master, then the updated
// state, in slot order.
std::vector<std::string> AppendUpdate(const OptimizerConfig& config, const std::string& master, const std::string& grad,
                                      const std::vector<std::string>& state, const UpdateScalars& scalars,
                                      GraphEditor& g);

}  // namespace npu::train
