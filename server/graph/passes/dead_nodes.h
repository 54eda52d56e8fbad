// Dead-node removal: nodes that no graph output depends on, and initializers
// that no remaining node or output reads, leave the graph (what folding left
// behind, and whatever an exporter emitted for nothing).
#pragma once

#include "npu/v1/graph.pb.h"

namespace npu::graph {

struct DeadStats {
  int removed_nodes = 0;
  int removed_initializers = 0;
};

DeadStats RemoveDeadNodes(v1::Graph& graph);

}  // namespace npu::graph
