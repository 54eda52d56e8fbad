// The import-time passes, in order, on the graph a plan is made from:
// unnamed nodes named, dynamic input dims bound, constants folded for the
// plan's preset, dead nodes removed. Every client's graph goes through them
// on the server (registered, inline, or imported from ONNX), and the plan (so
// the profile) shows the result.
//
// The passes work on a copy of the model's structure (nodes, inputs,
// outputs), never its weights: the model's initializers are read in place
// (Plan::weights), so a 200 MB model bound to several input shapes keeps one
// copy of its weights.
#pragma once

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "npu/v1/graph.pb.h"
#include "server/device/device_preset.h"
#include "server/graph/passes/constant_folding.h"
#include "server/graph/passes/dead_nodes.h"
#include "server/graph/plan.h"

namespace npu::graph {

struct PreparedGraph {
  std::shared_ptr<const v1::Graph> graph;    // the structure after the passes, with the folded initializers
  std::shared_ptr<const v1::Graph> weights;  // the model's own initializers
  FoldStats folded;
  DeadStats dead;
};

// Gives every unnamed node the name "<op_type>_<index>" (index in `graph`).
void NameUnnamedNodes(v1::Graph& graph);

// `input_types`: one per graph input, binding the dynamic dims (nullptr: the
// graph's shapes are static, or stay as declared). Errors: an input type that
// does not fit its declaration, a dynamic dim left unbound, a folded node's
// run that fails; all else is the planner's to report.
absl::StatusOr<PreparedGraph> PrepareGraph(std::shared_ptr<const v1::Graph> model,
                                           const std::vector<TensorType>* input_types,
                                           const device::DevicePreset& preset, const PlanLimits& limits);

// PrepareGraph, then BuildPlan of the result.
absl::StatusOr<std::shared_ptr<const Plan>> PreparePlan(std::shared_ptr<const v1::Graph> model,
                                                        const std::vector<TensorType>* input_types,
                                                        const device::DevicePreset& preset,
                                                        const PlanLimits& limits, const PlanOptions& options = {});

}  // namespace npu::graph
