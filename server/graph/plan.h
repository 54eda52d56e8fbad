// A validated, shape-inferred graph ready to run: built once (per registered
// graph), then only bound to inputs at each run.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "npu/v1/graph.pb.h"
#include "server/device/device_preset.h"
#include "server/graph/arena_plan.h"
#include "server/graph/host_tensor.h"
#include "server/graph/op_registry.h"
#include "server/graph/tensor_type.h"

namespace npu::graph {

struct PlanValue {
  std::string name;
  TensorType type;
  int producer = -1;   // index into Plan::nodes; -1 for graph inputs and constants
  HostTensor constant; // set for initializers
  bool is_constant = false;
  int last_use = -1;   // last node (in plan order) that reads it; -1 if none
  ValueStorage storage = ValueStorage::kInput;  // where it lives during a run (arena_plan.h)
  int64_t arena_offset = -1;                    // bytes into the run's arena, for kArena
};

struct PlanNode {
  const v1::Node* node = nullptr;  // points into Plan::graph
  const OpDef* op = nullptr;
  // Value ids; -1 for an omitted optional input. Inline up to 4: a plan of
  // 100,000 nodes would otherwise make 200,000 small heap blocks.
  absl::InlinedVector<int, 4> inputs;
  absl::InlinedVector<int, 4> outputs;
  std::shared_ptr<const void> state;  // what the op's infer prepared (InferContext::Prepare); may be null
  // Nodes fused into this one (fusion.h), after `node`, in chain order; the
  // profile names the fused node after all of them. Empty for a plain node.
  std::vector<const v1::Node*> fused;
};

struct Plan {
  // Node protos and initializer bytes: owned, or a view of a request that
  // outlives the plan (an inline Run's graph is planned for that run only).
  std::shared_ptr<const v1::Graph> graph;
  // Initializers read in place besides graph's own: the registered model's
  // weights, shared by every plan prepared from it (passes/prepare_graph.h).
  std::shared_ptr<const v1::Graph> weights;
  device::DevicePreset preset;             // the device kind the plan (tiling, prepared state) is for
  std::vector<PlanValue> values;
  std::vector<PlanNode> nodes;             // topological order
  std::vector<int> inputs;                 // graph inputs, in declaration order
  std::vector<int> outputs;                // graph outputs, in declaration order
  uint64_t arena_bytes = 0;                // one run's intermediates (arena_plan.h)
  uint64_t value_bytes = 0;                // every value's bytes summed: what a run touches
  bool fused = false;                      // some node absorbs others: intermediates of the graph are gone
  bool fusion_ran = false;                 // built with PlanOptions::fuse
  uint64_t id = 0;                         // unique in the process: its constants' device address space
};

struct PlanLimits {
  int64_t max_nodes = 100000;
  uint64_t max_tensor_bytes = uint64_t{4} << 30;
};

struct PlanOptions {
  // Fuse chains of ops into single nodes (fusion.h). Off for debug runs, which
  // return every node's output: a fused chain has no intermediates to return.
  bool fuse = true;
};

// Validates `graph`, infers every value's type and prepares every node for
// `preset`, folds Constant nodes into constants and (options.fuse) fuses
// chains. Errors are INVALID_ARGUMENT naming the node, input or value at
// fault. The plan keeps `graph` alive (pass an aliasing shared_ptr with no
// owner to plan a graph that outlives the plan without copying it).
// `weights`, when given, holds more initializers (its nodes are ignored),
// viewed in place and kept alive the same way.
absl::StatusOr<std::shared_ptr<const Plan>> BuildPlan(std::shared_ptr<const v1::Graph> graph,
                                                      const device::DevicePreset& preset,
                                                      const PlanLimits& limits = {}, const PlanOptions& options = {},
                                                      std::shared_ptr<const v1::Graph> weights = nullptr);

}  // namespace npu::graph
