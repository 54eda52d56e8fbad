// A model's gradient graphs, for an autograd that runs on the host (torch's,
// through torch_npu's modules on the NPU): a forward that returns the model's
// outputs and also the activations its backward reads (which the caller keeps
// on the device as handles), and a backward from the gradients of the
// outputs to those of the inputs and parameters asked for. The activations
// are computed once, by the forward; the backward reads them and does not run
// the forward again. Both graphs are ordinary graphs, registered and run like
// any (core/gradient_registration.h).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "npu/v1/graph.pb.h"
#include "server/device/device_preset.h"
#include "server/train/train_config.h"

namespace npu::train {

struct GradientRequest {
  // Float initializers that become inputs of both graphs: the values that
  // change between runs (a module's parameters).
  std::vector<std::string> parameters;
  // Float inputs of the model and parameters whose gradients the backward
  // returns; none: the forward alone (a train-mode run without autograd),
  // and no backward (it has no nodes).
  std::vector<std::string> wrt;
  // BatchNormalization on the batch's statistics (the running ones updated),
  // Dropout on (a seeded mask), LayerNormalization keeping its statistics.
  bool training = true;
  // apex's level (amp.h): at O2/O3 the model runs in fp16 (the parameters
  // fp16 inputs, BatchNormalization's fp32 at O2), its float inputs and
  // outputs fp32 at the graph's edge; gradients come in each one's dtype.
  AmpLevel amp = AmpLevel::kO0;
};

struct GradientGraphs {
  // Inputs: the model's, the parameters, the running statistics, the dropout
  // seed. Outputs: the model's, the updated running statistics (training),
  // then `saved`.
  v1::Graph forward;
  // Inputs: `grad_outputs` and values of the forward, by their names there
  // (its inputs, its outputs, `saved`). Outputs: `gradients`, then
  // `float_status`.
  v1::Graph backward;
  std::vector<std::string> buffers;         // BatchNormalization's running statistics, forward inputs
  std::vector<std::string> buffer_outputs;  // their updated values, forward outputs (training; "" otherwise)
  std::string dropout_seed;                 // the forward's INT64 seed input; "" without one
  std::vector<std::string> saved;           // forward outputs that only the backward reads
  // Per model output, the backward's input for its gradient ("" for an
  // output that is not float, or that no gradient asked for depends on).
  std::vector<std::string> grad_outputs;
  std::vector<std::string> gradients;  // per wrt, a backward output
  // FLOAT32 scalar: how many results of the backward's run overflowed
  // (NPUGetFloatStatus; 0 when clear).
  std::string float_status;
};

// INVALID_ARGUMENT names what is wrong: a parameter that is no float
// initializer (or is a running statistic), a wrt that is neither a float
// input nor a parameter, a model without float outputs, and every node the
// gradient cannot pass (autodiff.h).
absl::StatusOr<GradientGraphs> BuildGradientGraphs(v1::Graph model, const GradientRequest& request,
                                                   const device::DevicePreset& preset);

}  // namespace npu::train
