// One node's arity checks and shape/dtype inference (its op's prepare step),
// as the planner and the import-time passes both run them: the same errors,
// naming the node, whichever finds them.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "npu/v1/graph.pb.h"
#include "server/device/device_preset.h"
#include "server/graph/host_tensor.h"
#include "server/graph/op_registry.h"

namespace npu::graph {

// The node's input and output counts against its op's.
absl::Status CheckArity(const v1::Node& node, const OpDef& op);

struct NodeInference {
  std::vector<TensorType> outputs;     // one per node output
  std::shared_ptr<const void> state;   // what the op prepared (InferContext::Prepare)
};

// Runs op.infer behind GuardedCall: `inputs[j]` is input j's type (nullptr when
// omitted), `constants[j]` its value when known. Checks each output's rank and
// byte size (at most `max_tensor_bytes`). `epilogue`: the chain the fusion
// pass fused into the node (InferContext::epilogue), or null.
absl::StatusOr<NodeInference> InferNode(const v1::Node& node, const OpDef& op,
                                        std::vector<const TensorType*> inputs,
                                        std::vector<const HostTensor*> constants,
                                        const device::DevicePreset& preset, uint64_t max_tensor_bytes,
                                        const FusedEpilogue* epilogue = nullptr);

}  // namespace npu::graph
