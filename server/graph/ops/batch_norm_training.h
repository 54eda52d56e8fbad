// BatchNormalization in training mode (ONNX opset 15, training_mode = 1):
// normalises with the batch's statistics and updates the running ones,
//   running_mean = input_mean * momentum + batch_mean * (1 - momentum)
//   running_var  = input_var  * momentum + batch_var  * (1 - momentum)
// with the population variance, as ONNX specifies (torch keeps the unbiased
// one in its running_var). Also the batch statistics its gradient
// (BatchNormalizationGrad) recomputes from X.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "server/graph/op_registry.h"

namespace npu::graph::ops {

// The run of a BatchNormalization node whose inference (norm_ops.cc) found
// training_mode = 1: outputs Y and, when asked, running_mean and running_var.
absl::Status RunBatchNormTraining(RunContext& ctx);

// Per-channel mean and 1/sqrt(var + eps) of an [N, C, ...] tensor, in fp32,
// summed in index order (batch, then pixels): the statistics both the forward
// and the gradient use, bit for bit. `var` receives the population variance.
struct ChannelStats {
  std::vector<float> mean, var, inv_std;
};
ChannelStats BatchChannelStats(const HostTensor& x, float epsilon);

}  // namespace npu::graph::ops
