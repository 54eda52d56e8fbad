// Reverse-mode automatic differentiation on the server's graph IR: from a
// graph holding a forward pass and its scalar loss, the backward pass is
// appended as ordinary nodes (gradient ops and compositions of forward ops,
// gradient_rules.h), so it is validated, planned, run and profiled like any
// graph. Gradients of a value used several times are summed in the order its
// consumers run in reverse. Only what the loss depends on and what depends
// on the values asked for is differentiated.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "npu/v1/graph.pb.h"
#include "server/device/device_preset.h"

namespace npu::train {

struct BackwardRequest {
  std::string loss;              // a scalar float value of the graph
  std::string seed;              // a new graph input of the loss's type: dLoss (the loss scale, say)
  std::vector<std::string> wrt;  // graph inputs whose gradients are wanted
  // Instead of a loss and its seed (a vector-Jacobian product, what a host
  // autograd asks for): float values of the graph and, for each, the new
  // graph input (of its type) that holds its gradient.
  std::vector<std::pair<std::string, std::string>> output_grads;
};

// Appends the backward pass to `graph` (whose nodes must all be named) and
// returns the gradient value of each of `request.wrt`, in order; a value the
// loss does not depend on gets a constant zero. INVALID_ARGUMENT names every
// node the gradient cannot pass (its op has no rule, or the rule cannot
// differentiate it as configured: why) and every value asked for that reaches
// the loss only through values that are not float (naming where its paths
// leave the floats), all at once.
absl::StatusOr<std::vector<std::string>> AppendBackward(v1::Graph& graph, const BackwardRequest& request,
                                                        const device::DevicePreset& preset);

}  // namespace npu::train
