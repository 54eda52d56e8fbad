// A registered model: its graph as registered or imported (weights included,
// kept once) and the plans made from it through the import-time passes
// (graph/passes/prepare_graph.h), one per (device preset, float mode, bound input shapes),
// built on registration or first use.
//
// A graph whose inputs are all static has one plan per preset (and float mode), made at
// registration for the registration's device. A graph with dynamic dims (-1,
// ONNX's dim_param) is planned for the input shapes each run brings: one plan
// per signature, at most `max_plans` kept; past that the least recently used
// one is dropped (a run still holding it finishes with it) and a signature
// that comes back is planned again. Concurrent first runs of one signature may
// both plan; the first plan stored is kept.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/mutex.h"
#include "npu/v1/graph.pb.h"
#include "server/device/device_preset.h"
#include "server/graph/plan.h"

namespace npu::core {

class RegisteredGraph {
 public:
  // Validates `graph` and, when its inputs are static, plans it for `preset`.
  // `declared_outputs`: the outputs' types as the model declares them (ONNX),
  // reported for a dynamic graph, whose outputs are known only once bound;
  // may be empty.
  static absl::StatusOr<std::shared_ptr<RegisteredGraph>> Create(std::shared_ptr<const v1::Graph> graph,
                                                                 std::vector<v1::ValueInfo> declared_outputs,
                                                                 const device::DevicePreset& preset,
                                                                 const graph::PlanLimits& limits, size_t max_plans);

  const v1::Graph& graph() const { return *graph_; }
  bool dynamic() const { return dynamic_; }
  // What Run expects and returns: dtypes and shapes (-1 for a dynamic dim; an
  // output of a dynamic graph that the model does not declare has
  // DATA_TYPE_UNSPECIFIED and no shape).
  const std::vector<v1::ValueInfo>& inputs() const { return inputs_; }
  const std::vector<v1::ValueInfo>& outputs() const { return outputs_; }

  // The plan for `preset` and the run's input types (one per graph input, in
  // order; for a static graph they must match the declaration, which the
  // binding checks). Without options.fuse (debug runs), a plan in which
  // nothing is fused: the fused one when it fused nothing.
  absl::StatusOr<std::shared_ptr<const graph::Plan>> PlanFor(const device::DevicePreset& preset,
                                                             const std::vector<graph::TensorType>& input_types,
                                                             const graph::PlanLimits& limits,
                                                             const graph::PlanOptions& options = {});
  // The plan for `preset` of a graph whose inputs are static (what a caller
  // that plans before it has inputs, like the KServe frontend, runs);
  // INVALID_ARGUMENT naming the dynamic inputs otherwise.
  absl::StatusOr<std::shared_ptr<const graph::Plan>> PlanFor(const device::DevicePreset& preset,
                                                             const graph::PlanLimits& limits,
                                                             const graph::PlanOptions& options = {});
  size_t plans_cached() const;

 private:
  struct Entry {
    std::string preset;
    bool saturate = false;  // the preset's float mode (device/float_mode.h)
    bool exact = false;     // the bench's (DevicePreset::exact_cube_operands)
    std::vector<graph::Shape> shapes;  // empty for a static graph (the plan says whether it fused)
    std::shared_ptr<const graph::Plan> plan;
    uint64_t last_use = 0;
  };
  RegisteredGraph(std::shared_ptr<const v1::Graph> graph, bool dynamic, size_t max_plans)
      : graph_(std::move(graph)), dynamic_(dynamic), max_plans_(max_plans) {}
  std::shared_ptr<const graph::Plan> Find(const device::DevicePreset& preset, const std::vector<graph::Shape>& shapes,
                                          const graph::PlanOptions& options) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::shared_ptr<const v1::Graph> graph_;
  const bool dynamic_;
  const size_t max_plans_;
  std::vector<v1::ValueInfo> inputs_, outputs_;
  mutable Mutex mu_;
  std::vector<Entry> plans_ ABSL_GUARDED_BY(mu_);
  uint64_t clock_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace npu::core
