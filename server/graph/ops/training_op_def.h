// The pieces every training op (training_ops.cc) is declared with: its OpDef,
// the check that its float inputs are FLOAT16 or FLOAT32, and the fp32 chunk
// buffers of the ops that compute elementwise in a scalar loop.
#pragma once

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "kernels/fp16.h"
#include "server/graph/element_access.h"
#include "server/graph/node_error.h"
#include "server/graph/op_registry.h"

namespace npu::graph::ops {

using InferFn = std::function<absl::StatusOr<std::vector<TensorType>>(InferContext&)>;
using RunFn = std::function<absl::Status(RunContext&)>;

inline OpDef TrainingOpDef(std::string name, int min_inputs, int max_inputs, int outputs, InferFn infer, RunFn run,
                           std::string units = "Vector, MTE2, MTE3",
                           device::TaskType task = device::TaskType::kAiVectorCore) {
  OpDef d;
  d.name = std::move(name);
  d.units = std::move(units);
  d.task_type = task;
  d.dtypes = {v1::FLOAT16, v1::FLOAT32};
  d.min_inputs = min_inputs;
  d.max_inputs = max_inputs;
  d.num_outputs = outputs;
  d.infer = std::move(infer);
  d.run = std::move(run);
  return d;
}

// `d` with its attribute schema (the planner refuses any other attribute).
inline OpDef WithAttributes(OpDef d, std::vector<AttrDef> attributes) {
  d.attributes = std::move(attributes);
  return d;
}

// INVALID_ARGUMENT naming the first of `inputs` (when present) that is not
// FLOAT16 or FLOAT32; every input when `inputs` is empty.
inline absl::Status CheckFloatInputs(const InferContext& c, std::initializer_list<int> inputs = {}) {
  std::vector<int> which(inputs);
  if (which.empty()) {
    for (int i = 0; i < static_cast<int>(c.inputs.size()); ++i) which.push_back(i);
  }
  for (int i : which) {
    if (i >= static_cast<int>(c.inputs.size()) || c.inputs[i] == nullptr || IsFloat(c.inputs[i]->dtype)) continue;
    return NodeError(c.node, "input \"", c.node.inputs(i), "\": dtype ", DataTypeName(c.inputs[i]->dtype),
                     " is not supported (FLOAT16, FLOAT32)");
  }
  return absl::OkStatus();
}

// Where a scalar loop writes a chunk's fp32 results: straight into an fp32
// output, else into `scratch`, which StoreScalarChunk rounds once.
inline float* ScalarChunkOut(const HostTensor& out, int64_t s, int64_t len, std::vector<float>& scratch) {
  if (out.type().dtype == v1::FLOAT32) return out.mutable_as<float>() + s;
  scratch.resize(static_cast<size_t>(len));
  return scratch.data();
}

// Stores a chunk's fp32 results (ScalarChunkOut's) into the output; returns how
// many overflowed (an fp32 output written in place: those that are inf/NaN).
inline uint64_t StoreScalarChunk(const HostTensor& out, int64_t s, int64_t len, const float* result, bool saturate) {
  if (out.type().dtype == v1::FLOAT32) return kernels::CountNonFinite(result, static_cast<size_t>(len));
  return StoreFromFloat(out, s, len, result, saturate);
}

}  // namespace npu::graph::ops
