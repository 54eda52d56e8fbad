// The losses a trainer minimises, appended to a forward graph as ordinary
// nodes (so the backward pass differentiates them like the model):
//   cross_entropy  SoftmaxCrossEntropyLoss(prediction [N, C], labels INT64 [N]),
//                  the batch mean (torch's F.cross_entropy)
//   mse            ReduceMean((prediction - targets)^2) over every element
//                  (torch's F.mse_loss), targets FLOAT32 of the prediction's shape
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "npu/v1/graph.pb.h"
#include "server/graph/tensor_type.h"
#include "server/train/train_config.h"

namespace npu::train {

struct LossIO {
  std::string labels;  // the new graph input: labels or targets
  graph::TensorType labels_type;
  std::string loss;    // the FLOAT32 scalar
};

// `prediction` (FLOAT32, of `type`) is the model's output.
absl::StatusOr<LossIO> AppendLoss(LossKind kind, const std::string& prediction, const graph::TensorType& type,
                                  v1::Graph& graph);

const char* LossName(LossKind kind);

}  // namespace npu::train
