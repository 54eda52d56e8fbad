#include "server/graph/passes/prepare_graph.h"

#include <string>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "server/graph/bounded_text.h"
#include "server/graph/graph_structure.h"
#include "server/graph/passes/shape_binding.h"

namespace npu::graph {

void NameUnnamedNodes(v1::Graph& graph) {
  for (int i = 0; i < graph.nodes_size(); ++i) {
    v1::Node* n = graph.mutable_nodes(i);
    if (n->name().empty()) n->set_name(absl::StrCat(n->op_type(), "_", i));
  }
}

absl::StatusOr<PreparedGraph> PrepareGraph(std::shared_ptr<const v1::Graph> model,
                                           const std::vector<TensorType>* input_types,
                                           const device::DevicePreset& preset, const PlanLimits& limits) {
  if (model == nullptr) return absl::InvalidArgumentError("no graph given");
  PreparedGraph out;
  if (model->nodes_size() > limits.max_nodes) {  // the planner refuses it; no copy of a huge graph first
    out.graph = std::move(model);
    return out;
  }
  auto g = std::make_shared<v1::Graph>();
  g->set_name(model->name());
  *g->mutable_inputs() = model->inputs();
  *g->mutable_nodes() = model->nodes();
  *g->mutable_outputs() = model->outputs();
  NameUnnamedNodes(*g);
  if (input_types != nullptr) {
    if (auto s = BindInputShapes(*g, *input_types); !s.ok()) return s;
  }
  for (const auto& in : g->inputs()) {
    if (HasDynamicDims(in)) {
      return absl::InvalidArgumentError(absl::StrCat("graph input ", Quoted(in.name()), " is ",
                                                     DeclaredTypeString(in),
                                                     ": its dynamic dims are bound from a run's inputs"));
    }
  }
  // The passes run only on a graph of sound structure: on any other, removing
  // or folding nodes could hide the error the planner must report (a node
  // without outputs is dead, and would go unseen).
  if (!CheckGraphStructure(*g, model.get()).ok()) {  // the planner names what is wrong
    out.graph = std::move(g);
    out.weights = std::move(model);
    return out;
  }
  FoldOptions fold;
  fold.weights = model.get();
  fold.preset = &preset;
  fold.max_tensor_bytes = limits.max_tensor_bytes;
  auto folded = FoldConstants(*g, fold);
  if (!folded.ok()) return folded.status();
  out.folded = *folded;
  out.dead = RemoveDeadNodes(*g);
  out.graph = std::move(g);
  out.weights = std::move(model);
  return out;
}

absl::StatusOr<std::shared_ptr<const Plan>> PreparePlan(std::shared_ptr<const v1::Graph> model,
                                                        const std::vector<TensorType>* input_types,
                                                        const device::DevicePreset& preset,
                                                        const PlanLimits& limits, const PlanOptions& options) {
  auto prepared = PrepareGraph(std::move(model), input_types, preset, limits);
  if (!prepared.ok()) return prepared.status();
  return BuildPlan(std::move(prepared->graph), preset, limits, options, std::move(prepared->weights));
}

}  // namespace npu::graph
