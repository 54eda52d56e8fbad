// The order nodes run in: Kahn's algorithm, stable in graph order, shared by
// the planner and the import-time passes.
#pragma once

#include <vector>

namespace npu::graph {

struct TopoOrder {
  std::vector<int> order;    // every node whose inputs can be made, producers first
  std::vector<int> pending;  // per node: producers not yet ordered; > 0 only on or behind a cycle
  bool complete() const { return order.size() == pending.size(); }
};

// `producers[i]`: the nodes whose outputs node i reads (repeats allowed, no
// self-references).
TopoOrder TopologicalOrder(const std::vector<std::vector<int>>& producers);

}  // namespace npu::graph
