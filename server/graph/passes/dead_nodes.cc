#include "server/graph/passes/dead_nodes.h"

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace npu::graph {

DeadStats RemoveDeadNodes(v1::Graph& graph) {
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < graph.nodes_size(); ++i) {
    for (const auto& out : graph.nodes(i).outputs()) producer.emplace(out, i);
  }
  // Walk back from the outputs.
  std::vector<bool> live(static_cast<size_t>(graph.nodes_size()), false);
  std::vector<std::string> pending(graph.outputs().begin(), graph.outputs().end());
  std::unordered_set<std::string> read(pending.begin(), pending.end());
  while (!pending.empty()) {
    const std::string name = std::move(pending.back());
    pending.pop_back();
    auto it = producer.find(name);
    if (it == producer.end() || live[it->second]) continue;
    live[it->second] = true;
    for (const auto& in : graph.nodes(it->second).inputs()) {
      if (read.insert(in).second) pending.push_back(in);
    }
  }
  DeadStats stats;
  google::protobuf::RepeatedPtrField<v1::Node> nodes;
  for (int i = 0; i < graph.nodes_size(); ++i) {
    if (live[i]) {
      nodes.Add()->Swap(graph.mutable_nodes(i));
    } else {
      ++stats.removed_nodes;
    }
  }
  graph.mutable_nodes()->Swap(&nodes);
  google::protobuf::RepeatedPtrField<v1::Initializer> inits;
  for (auto& init : *graph.mutable_initializers()) {
    if (read.contains(init.name())) {
      inits.Add()->Swap(&init);
    } else {
      ++stats.removed_initializers;
    }
  }
  graph.mutable_initializers()->Swap(&inits);
  return stats;
}

}  // namespace npu::graph
