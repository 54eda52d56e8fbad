#include "server/graph/plan.h"

#include <atomic>
#include <deque>
#include <unordered_map>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/graph/bounded_text.h"
#include "server/graph/fusion.h"
#include "server/graph/graph_structure.h"
#include "server/graph/node_error.h"
#include "server/graph/node_infer.h"
#include "server/graph/passes/prepare_graph.h"
#include "server/graph/shape_math.h"
#include "server/graph/topo_order.h"

namespace npu::graph {
namespace {

class PlanBuilder {
 public:
  PlanBuilder(std::shared_ptr<const v1::Graph> graph, std::shared_ptr<const v1::Graph> weights,
              const device::DevicePreset& preset, const PlanLimits& limits, const PlanOptions& options)
      : graph_(graph), weights_(weights), limits_(limits), options_(options) {
    plan_->graph = std::move(graph);
    plan_->weights = std::move(weights);
    plan_->preset = preset;
  }

  absl::StatusOr<std::shared_ptr<const Plan>> Build() {
    if (auto s = CheckSize(); !s.ok()) return s;
    // Names, single assignment, ops and arity: so the steps below define and
    // resolve values without failing.
    if (auto s = CheckGraphStructure(*graph_, weights_.get()); !s.ok()) return s;
    if (auto s = AddInputs(); !s.ok()) return s;
    if (auto s = AddInitializers(); !s.ok()) return s;
    AddNodes();
    if (auto s = SortAndInfer(); !s.ok()) return s;
    AddOutputs();
    plan_->fusion_ran = options_.fuse;
    if (options_.fuse) {
      FuseChains(*plan_, [this](PlanNode& pn, const FusedEpilogue& e) { return Infer(pn, &e); });
    }
    Compact();
    ComputeLastUses();
    AssignStorage(*plan_);
    static std::atomic<uint64_t> next_id{0};
    plan_->id = ++next_id;
    for (const PlanValue& v : plan_->values) plan_->value_bytes += v.type.bytes();
    return std::shared_ptr<const Plan>(std::move(plan_));
  }

 private:
  absl::Status CheckSize() {
    if (graph_->nodes_size() > limits_.max_nodes) {
      return absl::InvalidArgumentError(absl::StrCat("graph has ", graph_->nodes_size(),
                                                     " nodes; the limit is ", limits_.max_nodes));
    }
    // Exact sizes: a plan is kept as long as its graph is registered, and
    // doubling growth would leave up to half of each vector unused.
    size_t values = static_cast<size_t>(graph_->inputs_size()) + static_cast<size_t>(graph_->initializers_size());
    for (const v1::Node& node : graph_->nodes()) values += static_cast<size_t>(node.outputs_size());
    plan_->values.reserve(values);
    plan_->nodes.reserve(static_cast<size_t>(graph_->nodes_size()));
    nodes_.reserve(static_cast<size_t>(graph_->nodes_size()));
    return absl::OkStatus();
  }

  // Each name once: CheckGraphStructure made sure.
  int DefineValue(const std::string& name) {
    const int id = static_cast<int>(plan_->values.size());
    PlanValue value;
    value.name = name;
    plan_->values.push_back(std::move(value));
    ids_[name] = id;
    return id;
  }

  // Every value's size, inferred ones included, is checked here without
  // overflow: whatever an op's inference computed, no run sees a wrapped size.
  absl::Status CheckBytes(const TensorType& t, const std::string& what) {
    return CheckedBytes(t, limits_.max_tensor_bytes, what).status();
  }

  absl::Status AddInputs() {
    for (const auto& in : graph_->inputs()) {
      const std::string what = absl::StrCat("graph input ", Quoted(in.name()));
      auto type = ValidateType(in.dtype(), in.shape(), what);
      if (!type.ok()) return type.status();
      if (auto s = CheckBytes(*type, what); !s.ok()) return s;
      const int id = DefineValue(in.name());
      plan_->values[id].type = *type;
      plan_->inputs.push_back(id);
    }
    return absl::OkStatus();
  }

  absl::Status AddInitializers() {
    if (auto s = AddInitializersOf(graph_); !s.ok()) return s;
    return weights_ == nullptr ? absl::OkStatus() : AddInitializersOf(weights_);
  }

  // `source`'s initializers as constants, viewed in place (kept alive by the
  // plan); of the weights, only those the graph reads.
  absl::Status AddInitializersOf(const std::shared_ptr<const v1::Graph>& source) {
    std::unordered_set<std::string> read;
    if (source != graph_) {
      read.insert(graph_->outputs().begin(), graph_->outputs().end());
      for (const auto& n : graph_->nodes()) read.insert(n.inputs().begin(), n.inputs().end());
    }
    for (const auto& init : source->initializers()) {
      const std::string what = absl::StrCat("initializer ", Quoted(init.name()));
      auto type = ValidateType(init.tensor().dtype(), init.tensor().shape(), what);
      if (!type.ok()) return type.status();
      if (type->bytes() != init.tensor().data().size()) {
        return absl::InvalidArgumentError(absl::StrCat(what, ": ", ToString(*type), " needs ", type->bytes(),
                                                       " bytes of data, got ", init.tensor().data().size()));
      }
      if (auto s = CheckBoolBytes(*type, init.tensor().data().data(), what); !s.ok()) return s;
      if (source != graph_ && !read.contains(init.name())) continue;  // checked, not needed
      PlanValue& v = plan_->values[DefineValue(init.name())];
      v.type = *type;
      v.is_constant = true;
      v.constant = HostTensor(*type, source, reinterpret_cast<const std::byte*>(init.tensor().data().data()));
    }
    return absl::OkStatus();
  }

  void AddNodes() {
    for (int i = 0; i < graph_->nodes_size(); ++i) {
      const v1::Node* node = &graph_->nodes(i);
      PlanNode pn;
      pn.node = node;
      pn.op = OpRegistry::Global().Find(node->op_type());
      for (const auto& out : node->outputs()) {
        const int id = DefineValue(out);
        plan_->values[id].producer = i;  // graph order for now; remapped after sorting
        pn.outputs.push_back(id);
      }
      nodes_.push_back(std::move(pn));
    }
    // Inputs are resolved once every node's outputs are known (graphs need not be sorted).
    for (PlanNode& pn : nodes_) {
      for (int j = 0; j < pn.node->inputs_size(); ++j) {
        const std::string& name = pn.node->inputs(j);
        if (name.empty()) {
          pn.inputs.push_back(-1);
          continue;
        }
        pn.inputs.push_back(ids_.at(name));
      }
    }
  }

  absl::Status SortAndInfer() {
    const int n = static_cast<int>(nodes_.size());
    std::vector<std::vector<int>> producers(n);
    for (int i = 0; i < n; ++i) {
      for (int v : nodes_[i].inputs) {
        if (v < 0) continue;
        const int p = plan_->values[v].producer;
        if (p < 0) continue;
        if (p == i) {
          return NodeError(*nodes_[i].node, "input ", Quoted(plan_->values[v].name), " is its own output (self-loop)");
        }
        producers[i].push_back(p);
      }
    }
    const TopoOrder sorted = TopologicalOrder(producers);
    if (!sorted.complete()) {
      std::vector<std::string> stuck;
      for (int i = 0; i < n && stuck.size() < 8; ++i) {
        if (sorted.pending[i] > 0) stuck.push_back(Quoted(nodes_[i].node->name()));
      }
      return absl::InvalidArgumentError(
          absl::StrCat("graph has a cycle through nodes ", absl::StrJoin(stuck, ", ")));
    }
    const std::vector<int>& order = sorted.order;
    std::vector<int> position(n);
    for (int k = 0; k < n; ++k) position[order[k]] = k;
    for (int k = 0; k < n; ++k) {
      PlanNode pn = std::move(nodes_[order[k]]);
      for (int v : pn.outputs) plan_->values[v].producer = k;
      if (auto s = Infer(pn); !s.ok()) return s;
      if (pn.op->folds_to_constant) {
        // Known now: a constant like an initializer (later nodes see it in
        // InferContext::constants); Compact drops the node.
        PlanValue& v = plan_->values[pn.outputs[0]];
        v.is_constant = true;
        v.constant = *static_cast<const HostTensor*>(pn.state.get());
      }
      plan_->nodes.push_back(std::move(pn));
    }
    return absl::OkStatus();
  }

  // Infers and prepares `pn`. With `epilogue` (the fusion pass), prepares a
  // fused node again: its output types are the op's, which must not change.
  absl::Status Infer(PlanNode& pn, const FusedEpilogue* epilogue = nullptr) {
    std::vector<const TensorType*> types;
    std::vector<const HostTensor*> constants;
    for (int v : pn.inputs) {
      types.push_back(v < 0 ? nullptr : &plan_->values[v].type);
      constants.push_back(v >= 0 && plan_->values[v].is_constant ? &plan_->values[v].constant : nullptr);
    }
    auto inferred = InferNode(*pn.node, *pn.op, std::move(types), std::move(constants), plan_->preset,
                              limits_.max_tensor_bytes, epilogue);
    if (!inferred.ok()) return inferred.status();
    pn.state = std::move(inferred->state);
    if (epilogue != nullptr) {
      for (size_t j = 0; j < pn.outputs.size(); ++j) {
        if (!(inferred->outputs[j] == plan_->values[pn.outputs[j]].type)) {
          return absl::InternalError(absl::StrCat(NodeLabel(*pn.node), ": its fused output type changed"));
        }
      }
      return absl::OkStatus();
    }
    for (size_t j = 0; j < pn.outputs.size(); ++j) plan_->values[pn.outputs[j]].type = inferred->outputs[j];
    return absl::OkStatus();
  }

  void AddOutputs() {
    for (const auto& name : graph_->outputs()) plan_->outputs.push_back(ids_.at(name));
  }

  void ComputeLastUses() {
    for (int k = 0; k < static_cast<int>(plan_->nodes.size()); ++k) {
      for (int v : plan_->nodes[k].inputs) {
        if (v >= 0) plan_->values[v].last_use = k;
      }
    }
  }

  // Drops the nodes no run executes (folded constants) and the values no node
  // produces or reads any more (fused away), renumbering the rest.
  void Compact() {
    std::vector<PlanNode> nodes;
    nodes.reserve(plan_->nodes.size());
    for (PlanNode& pn : plan_->nodes) {
      plan_->fused = plan_->fused || !pn.fused.empty();
      if (!pn.op->folds_to_constant) nodes.push_back(std::move(pn));
    }
    plan_->nodes = std::move(nodes);
    std::vector<bool> used(plan_->values.size(), false);
    for (int v : plan_->inputs) used[v] = true;
    for (int v : plan_->outputs) used[v] = true;
    for (const PlanNode& pn : plan_->nodes) {
      for (int v : pn.inputs) {
        if (v >= 0) used[v] = true;
      }
      for (int v : pn.outputs) used[v] = true;
    }
    std::vector<int> id(plan_->values.size(), -1);
    std::vector<PlanValue> values;
    for (size_t v = 0; v < plan_->values.size(); ++v) {
      if (!used[v]) continue;
      id[v] = static_cast<int>(values.size());
      values.push_back(std::move(plan_->values[v]));
      values.back().producer = -1;
    }
    plan_->values = std::move(values);
    auto remap = [&](auto& list) {
      for (auto& v : list) {
        if (v >= 0) v = id[v];
      }
    };
    remap(plan_->inputs);
    remap(plan_->outputs);
    for (int k = 0; k < static_cast<int>(plan_->nodes.size()); ++k) {
      remap(plan_->nodes[k].inputs);
      remap(plan_->nodes[k].outputs);
      for (int v : plan_->nodes[k].outputs) plan_->values[v].producer = k;
    }
  }

  std::shared_ptr<const v1::Graph> graph_;
  std::shared_ptr<const v1::Graph> weights_;  // more initializers; may be null
  const PlanLimits& limits_;
  const PlanOptions& options_;
  std::unique_ptr<Plan> plan_ = std::make_unique<Plan>();
  std::unordered_map<std::string, int> ids_;
  std::vector<PlanNode> nodes_;  // graph order, before sorting
};

}  // namespace

absl::StatusOr<std::shared_ptr<const Plan>> BuildPlan(std::shared_ptr<const v1::Graph> graph,
                                                      const device::DevicePreset& preset, const PlanLimits& limits,
                                                      const PlanOptions& options,
                                                      std::shared_ptr<const v1::Graph> weights) {
  if (graph == nullptr) return absl::InvalidArgumentError("no graph given");
  // Error messages and profiles name nodes: unnamed ones get "<op>_<index>",
  // in a copy (clients and the ONNX import name their nodes; this is rare).
  for (const v1::Node& node : graph->nodes()) {
    if (!node.name().empty()) continue;
    auto named = std::make_shared<v1::Graph>(*graph);
    NameUnnamedNodes(*named);
    graph = std::move(named);
    break;
  }
  return PlanBuilder(std::move(graph), std::move(weights), preset, limits, options).Build();
}

}  // namespace npu::graph
