// Registered graphs by id, per tenant. A registered graph keeps its graph and
// one plan per device preset it runs on (a plan's tiling and prepared state
// are for one kind of device), built once, on registration or first use.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "base/mutex.h"
#include "server/device/device_preset.h"
#include "server/graph/plan.h"

namespace npu::rpc {

class RegisteredGraph {
 public:
  explicit RegisteredGraph(std::shared_ptr<const graph::Plan> first) : graph_(first->graph), plans_{std::move(first)} {}
  // The graph every plan is built from (its name, declared inputs and outputs).
  const v1::Graph& graph() const { return *graph_; }
  // The plan for `preset`: the one built at registration, or built now from
  // the same graph (and kept). Without options.fuse (debug runs), a plan in
  // which nothing is fused: the registered one when it fused nothing.
  absl::StatusOr<std::shared_ptr<const graph::Plan>> PlanFor(const device::DevicePreset& preset,
                                                             const graph::PlanLimits& limits,
                                                             const graph::PlanOptions& options = {});

 private:
  const std::shared_ptr<const v1::Graph> graph_;
  Mutex mu_;
  // One per preset and fusion choice; [0] first.
  std::vector<std::shared_ptr<const graph::Plan>> plans_ ABSL_GUARDED_BY(mu_);
};

class GraphStore {
 public:
  std::string Add(const std::string& tenant, std::shared_ptr<const graph::Plan> plan);
  absl::StatusOr<std::shared_ptr<RegisteredGraph>> Get(const std::string& tenant, const std::string& id);
  absl::Status Remove(const std::string& tenant, const std::string& id);
  // The tenant's graphs, by id, in id order.
  std::vector<std::pair<std::string, std::shared_ptr<RegisteredGraph>>> List(const std::string& tenant);

 private:
  Mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<RegisteredGraph>> graphs_ ABSL_GUARDED_BY(mu_);  // tenant '\0' id
};

}  // namespace npu::rpc
