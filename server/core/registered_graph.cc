#include "server/core/registered_graph.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/graph/bounded_text.h"
#include "server/graph/graph_structure.h"
#include "server/graph/passes/prepare_graph.h"
#include "server/graph/passes/shape_binding.h"

namespace npu::core {
namespace {

void Describe(const graph::Plan& plan, const std::vector<int>& ids, std::vector<v1::ValueInfo>& out) {
  for (int v : ids) {
    v1::ValueInfo& info = out.emplace_back();
    info.set_name(plan.values[v].name);
    info.set_dtype(plan.values[v].type.dtype);
    for (int64_t d : plan.values[v].type.shape) info.add_shape(d);
  }
}

}  // namespace

absl::StatusOr<std::shared_ptr<RegisteredGraph>> RegisteredGraph::Create(
    std::shared_ptr<const v1::Graph> graph, std::vector<v1::ValueInfo> declared_outputs,
    const device::DevicePreset& preset, const graph::PlanLimits& limits, size_t max_plans) {
  if (graph == nullptr) return absl::InvalidArgumentError("no graph given");
  const bool dynamic = graph::HasDynamicInputs(*graph);
  std::shared_ptr<RegisteredGraph> entry(new RegisteredGraph(graph, dynamic, std::max<size_t>(1, max_plans)));
  if (!dynamic) {
    auto plan = graph::PreparePlan(graph, nullptr, preset, limits);
    if (!plan.ok()) return plan.status();
    Describe(**plan, (*plan)->inputs, entry->inputs_);
    Describe(**plan, (*plan)->outputs, entry->outputs_);
    entry->plans_.push_back({preset.name, preset.fp16_saturation, preset.exact_cube_operands, {}, *std::move(plan), 0});
    return entry;
  }
  if (graph->nodes_size() > limits.max_nodes) {  // the same refusal a plan would give
    return graph::PreparePlan(graph, nullptr, preset, limits).status();
  }
  // What can be checked before a dynamic graph's shapes are known.
  if (auto s = graph::CheckGraphStructure(*graph); !s.ok()) return s;
  entry->inputs_.assign(graph->inputs().begin(), graph->inputs().end());
  for (const std::string& name : graph->outputs()) {
    auto declared = std::find_if(declared_outputs.begin(), declared_outputs.end(),
                                 [&](const v1::ValueInfo& v) { return v.name() == name; });
    if (declared != declared_outputs.end()) {
      entry->outputs_.push_back(*declared);
    } else {
      entry->outputs_.emplace_back().set_name(name);
    }
  }
  return entry;
}

std::shared_ptr<const graph::Plan> RegisteredGraph::Find(const device::DevicePreset& preset,
                                                         const std::vector<graph::Shape>& shapes,
                                                         const graph::PlanOptions& options) {
  for (Entry& e : plans_) {
    const bool serves = options.fuse ? e.plan->fusion_ran : !e.plan->fused;
    if (e.preset == preset.name && e.saturate == preset.fp16_saturation && e.exact == preset.exact_cube_operands && e.shapes == shapes && serves) {
      e.last_use = ++clock_;
      return e.plan;
    }
  }
  return nullptr;
}

absl::StatusOr<std::shared_ptr<const graph::Plan>> RegisteredGraph::PlanFor(
    const device::DevicePreset& preset, const std::vector<graph::TensorType>& input_types,
    const graph::PlanLimits& limits, const graph::PlanOptions& options) {
  std::vector<graph::Shape> shapes;
  if (dynamic_) {
    for (const graph::TensorType& t : input_types) shapes.push_back(t.shape);
  }
  {
    MutexLock lock(&mu_);
    if (auto plan = Find(preset, shapes, options)) return plan;
  }
  // Planned outside the lock (it may take a while).
  auto plan = graph::PreparePlan(graph_, dynamic_ ? &input_types : nullptr, preset, limits, options);
  if (!plan.ok()) return plan.status();
  MutexLock lock(&mu_);
  if (auto kept = Find(preset, shapes, options)) return kept;
  if (plans_.size() >= max_plans_) {
    auto oldest = std::min_element(plans_.begin(), plans_.end(),
                                   [](const Entry& a, const Entry& b) { return a.last_use < b.last_use; });
    plans_.erase(oldest);
  }
  plans_.push_back({preset.name, preset.fp16_saturation, preset.exact_cube_operands, std::move(shapes), *plan, ++clock_});
  return *plan;
}

absl::StatusOr<std::shared_ptr<const graph::Plan>> RegisteredGraph::PlanFor(const device::DevicePreset& preset,
                                                                            const graph::PlanLimits& limits,
                                                                            const graph::PlanOptions& options) {
  if (dynamic_) {
    std::vector<std::string> dynamic;
    for (const v1::ValueInfo& in : inputs_) {
      if (std::find(in.shape().begin(), in.shape().end(), -1) != in.shape().end()) {
        dynamic.push_back(graph::Quoted(in.name()));
      }
    }
    return absl::InvalidArgumentError(absl::StrCat("the graph's input dims are bound by each run (dynamic: ",
                                                   absl::StrJoin(dynamic, ", "),
                                                   "); this call plans before it has inputs"));
  }
  return PlanFor(preset, {}, limits, options);
}

size_t RegisteredGraph::plans_cached() const {
  MutexLock lock(&mu_);
  return plans_.size();
}

}  // namespace npu::core
