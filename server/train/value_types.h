// What the planner infers about a graph, for the passes that extend it: every
// value's type and the nodes in execution order.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "npu/v1/graph.pb.h"
#include "server/device/device_preset.h"
#include "server/graph/tensor_type.h"

namespace npu::train {

using TypeMap = std::map<std::string, graph::TensorType>;

struct GraphFacts {
  TypeMap types;                         // every input, initializer and node output
  std::vector<int> order;                // indices into graph.nodes(), topological
};

// Validates and plans `graph` for `preset` (errors name the node at fault).
absl::StatusOr<GraphFacts> InferGraphFacts(const v1::Graph& graph, const device::DevicePreset& preset);

}  // namespace npu::train
