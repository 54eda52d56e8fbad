#include "server/train/value_types.h"

#include <memory>
#include <unordered_map>

#include "server/graph/plan.h"

namespace npu::train {

absl::StatusOr<GraphFacts> InferGraphFacts(const v1::Graph& graph, const device::DevicePreset& preset) {
  // Unfused: every node and value of the graph as written, in the planner's order.
  auto plan = graph::BuildPlan(std::shared_ptr<const v1::Graph>(std::shared_ptr<void>(), &graph), preset, {},
                               graph::PlanOptions{.fuse = false});
  if (!plan.ok()) return plan.status();
  GraphFacts facts;
  for (const graph::PlanValue& v : (*plan)->values) facts.types[v.name] = v.type;
  std::unordered_map<std::string, int> index;
  for (int i = 0; i < graph.nodes_size(); ++i) index[graph.nodes(i).name()] = i;
  for (const graph::PlanNode& pn : (*plan)->nodes) {
    auto it = index.find(pn.node->name());
    if (it == index.end()) return absl::InvalidArgumentError("every node of a model to train needs a name");
    facts.order.push_back(it->second);
  }
  return facts;
}

}  // namespace npu::train
