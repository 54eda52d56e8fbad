#include "server/graph/graph_structure.h"

#include <initializer_list>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "server/graph/bounded_text.h"
#include "server/graph/node_error.h"
#include "server/graph/node_infer.h"
#include "server/graph/op_registry.h"
#include "server/graph/passes/prepare_graph.h"

namespace npu::graph {
namespace {

// Who defined a value: a node, or (no node) a graph input or an initializer.
struct Definer {
  const v1::Node* node = nullptr;
  bool initializer = false;
};

class Definitions {
 public:
  absl::Status Define(const std::string& name, Definer by) {
    if (name.empty()) return absl::InvalidArgumentError(absl::StrCat(What(by), " has an empty name"));
    auto [it, fresh] = by_name_.emplace(name, by);
    if (!fresh) {
      const Definer& first = it->second;
      return absl::InvalidArgumentError(absl::StrCat(
          What(by), ": value ", Quoted(name), " is defined more than once (first by ",
          first.node != nullptr ? NodeLabel(*first.node) : first.initializer ? "an initializer" : "a graph input",
          ")"));
    }
    return absl::OkStatus();
  }
  bool Defined(const std::string& name) const { return by_name_.contains(name); }

 private:
  static std::string What(const Definer& d) {
    if (d.node != nullptr) return NodeLabel(*d.node) + " output";
    return d.initializer ? "initializer" : "graph input";
  }
  std::unordered_map<std::string, Definer> by_name_;
};

// `graph`'s structure; the initializers are those of `sources` (null ones skipped).
absl::Status Check(const v1::Graph& graph, std::initializer_list<const v1::Graph*> sources) {
  if (graph.outputs_size() == 0) return absl::InvalidArgumentError("graph has no outputs");
  Definitions defs;
  for (const auto& in : graph.inputs()) {
    if (auto s = defs.Define(in.name(), {}); !s.ok()) return s;
  }
  for (const v1::Graph* g : sources) {
    if (g == nullptr) continue;
    for (const auto& init : g->initializers()) {
      if (auto s = defs.Define(init.name(), {nullptr, true}); !s.ok()) return s;
    }
  }
  std::unordered_set<std::string> node_names;
  for (const v1::Node& node : graph.nodes()) {
    if (!node_names.insert(node.name()).second) {
      return absl::InvalidArgumentError(absl::StrCat("node name ", Quoted(node.name()), " is used more than once"));
    }
    const OpDef* op = OpRegistry::Global().Find(node.op_type());
    if (op == nullptr) return NodeError(node, "unknown op type ", Quoted(node.op_type()));
    if (auto s = CheckArity(node, *op); !s.ok()) return s;
    for (const auto& out : node.outputs()) {
      if (auto s = defs.Define(out, {&node, false}); !s.ok()) return s;
    }
  }
  for (const v1::Node& node : graph.nodes()) {
    for (int j = 0; j < node.inputs_size(); ++j) {
      const std::string& name = node.inputs(j);
      if (!name.empty() && !defs.Defined(name)) {
        return NodeError(node, "input ", j, " ", Quoted(name), " is not defined");
      }
    }
  }
  std::unordered_set<std::string> listed;
  for (const auto& name : graph.outputs()) {
    if (!defs.Defined(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("graph output ", Quoted(name), " is not defined by any node, input or initializer"));
    }
    if (!listed.insert(name).second) {
      return absl::InvalidArgumentError(absl::StrCat("graph output ", Quoted(name), " is listed more than once"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckGraphStructure(const v1::Graph& graph, const v1::Graph* weights) {
  for (const v1::Node& node : graph.nodes()) {
    if (!node.name().empty()) continue;
    // Errors name nodes as the planner will ("<op>_<index>" for an unnamed
    // one), from a copy of the structure; initializers are read where they are.
    v1::Graph named;
    *named.mutable_inputs() = graph.inputs();
    *named.mutable_nodes() = graph.nodes();
    *named.mutable_outputs() = graph.outputs();
    NameUnnamedNodes(named);
    return Check(named, {&graph, weights});
  }
  return Check(graph, {&graph, weights});
}

}  // namespace npu::graph
