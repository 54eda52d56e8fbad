// The forward pass of a training step (or of an evaluation), made from the
// model: its parameters and running statistics become graph inputs (they
// change every step), the data input's shape is the step's (its batch and any
// dim the export left dynamic, as inference binds them), BatchNormalization
// runs in training mode and returns its updated running statistics,
// LayerNormalization keeps its Mean and InvStdDev (the gradient reads them),
// and Dropout draws a new mask each step (SeededDropout, the step's seed).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "npu/v1/graph.pb.h"
#include "server/device/device_preset.h"
#include "server/graph/tensor_type.h"
#include "server/train/model_spec.h"

namespace npu::train {

struct ForwardIO {
  std::map<std::string, std::string> buffer_out;  // running statistic -> its updated value (training)
  std::string dropout_seed;                       // the INT64 seed input, when the model has Dropout
};

// MakeForward's data shape that keeps every input's shape as the model declares it.
inline constexpr std::nullopt_t kDeclaredShapes = std::nullopt;

// The forward of `spec` for a data input of shape `x` (CheckDataShape's), or
// kDeclaredShapes, in training or inference mode. The graph keeps the model's
// input and output names.
absl::StatusOr<ForwardIO> MakeForward(const ModelSpec& spec, const std::optional<graph::Shape>& x, bool training,
                                      v1::Graph& out);

// OK when `x` fits the model's data input: its rank, >= 1 rows, and every dim
// the model declares (a dynamic one takes any size >= 1); else
// INVALID_ARGUMENT naming the input and the shape it takes.
absl::Status CheckDataShape(const ModelSpec& spec, const graph::Shape& x);

// Every Dropout of `graph` in inference whatever its training_mode input says
// (torch exports it true from a module in train mode): what an evaluation
// runs, and what the model is validated as before a trainer is made of it.
void DropoutsForInference(v1::Graph& graph);

// Whether the data input declares every dim but the batch.
bool OnlyTheBatchIsDynamic(const ModelSpec& spec);

// The import-time passes (graph/passes/prepare_graph.h) on a forward whose
// inputs are all static, the parameters among them (so nothing they feed is
// folded away): what torch's export computes from shapes (Shape, Gather,
// Concat into a Reshape's, Expand's or Slice's operand) becomes constants, as
// the inference path has them. A forward with dynamic dims is left as it is.
absl::Status FoldShapeComputations(v1::Graph& forward, const device::DevicePreset& preset);

}  // namespace npu::train
