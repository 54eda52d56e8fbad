// The forward pass of a training step (or of an evaluation), made from the
// model: its parameters and running statistics become graph inputs (they
// change every step), the batch dimension is the step's, BatchNormalization
// runs in training mode and returns its updated running statistics,
// LayerNormalization keeps its Mean and InvStdDev (the gradient reads them),
// and Dropout draws a new mask each step (SeededDropout, the step's seed).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "npu/v1/graph.pb.h"
#include "server/train/model_spec.h"

namespace npu::train {

struct ForwardIO {
  std::map<std::string, std::string> buffer_out;  // running statistic -> its updated value (training)
  std::string dropout_seed;                       // the INT64 seed input, when the model has Dropout
};

// MakeForward's batch that keeps every input's shape as the model declares it.
inline constexpr int64_t kDeclaredShapes = -1;

// The forward of `spec` for batches of `batch` (or kDeclaredShapes), in
// training or inference mode. The graph keeps the model's input and output
// names.
absl::StatusOr<ForwardIO> MakeForward(const ModelSpec& spec, int64_t batch, bool training, v1::Graph& out);

}  // namespace npu::train
