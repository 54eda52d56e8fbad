// One training step as one graph, per device: the model's forward in
// training mode (training_forward.h) under the amp level (amp.h), the loss
// (loss.h), the backward pass (autodiff.h), the float status of the step
// (NPUGetFloatStatus over every gradient), and the optimizer's update of
// every parameter (optimizer.h), skipped on the device when the status is
// set. Also the evaluation graph: the forward in inference mode and the loss.
// Planned once per data shape (a batch size, and the sizes of any dims the
// export left dynamic), run through the runner like any graph.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "npu/v1/graph.pb.h"
#include "server/device/device_preset.h"
#include "server/train/model_spec.h"
#include "server/train/train_config.h"

namespace npu::train {

// The step graph's inputs and outputs by role. Per-parameter lists follow
// ModelSpec::params, buffers ModelSpec::buffers.
struct StepSignature {
  // Inputs.
  std::string x, labels;
  std::string loss_seed;     // FLOAT32: dLoss, the loss scale times this shard's share of the batch
  std::string grad_scale;    // FLOAT32: 1 / loss scale
  std::string lr;            // FLOAT32
  std::string step;          // INT64: the update's number (Adam), "" otherwise
  std::string dropout_seed;  // INT64, "" without Dropout
  std::vector<std::string> params;   // the model's copies, in their amp dtype
  std::vector<std::string> masters;  // O2: fp32 masters of the fp16 parameters ("" where the param is its own master)
  std::vector<std::vector<std::string>> state;  // optimizer state, per parameter and slot
  std::vector<std::string> buffers;
  // Outputs.
  std::string loss;       // FLOAT32: this shard's mean loss (unscaled)
  std::string found_inf;  // FLOAT32: the step's float status; non-zero = the update was skipped
  std::vector<std::string> params_out, masters_out;
  std::vector<std::vector<std::string>> state_out;
  std::vector<std::string> buffers_out;
};

struct StepGraph {
  v1::Graph graph;
  StepSignature sig;
};

// `world` devices take part in the step (one graph each, the same but for the
// batch): with more than one, the gradients go through HcclAllReduce in
// DDP's buckets and the float status through one more, so every device
// applies the same update, skipped on all when any overflowed.
absl::StatusOr<StepGraph> BuildStepGraph(const ModelSpec& spec, const TrainConfig& config, const graph::Shape& x,
                                         const device::DevicePreset& preset, int world = 1);

// Evaluation: inputs x, labels, the parameters (amp dtype) and buffers;
// outputs the prediction (FLOAT32) and the mean loss.
struct EvalSignature {
  std::string x, labels;
  std::vector<std::string> params, buffers;
  std::string prediction, loss;
};
struct EvalGraph {
  v1::Graph graph;
  EvalSignature sig;
};

absl::StatusOr<EvalGraph> BuildEvalGraph(const ModelSpec& spec, const TrainConfig& config, const graph::Shape& x,
                                         const device::DevicePreset& preset);

}  // namespace npu::train
