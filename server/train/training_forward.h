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
#include "server/device/device_preset.h"
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

// The import-time passes (graph/passes/prepare_graph.h) on a forward whose
// inputs are all static, the parameters among them (so nothing they feed is
// folded away): what torch's export computes from shapes (Shape, Gather,
// Concat into a Reshape's, Expand's or Slice's operand) becomes constants, as
// the inference path has them. A forward with dynamic dims is left as it is.
absl::Status FoldShapeComputations(v1::Graph& forward, const device::DevicePreset& preset);

}  // namespace npu::train
