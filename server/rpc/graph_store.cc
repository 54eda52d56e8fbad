#include "server/rpc/graph_store.h"

#include <algorithm>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "server/graph/bounded_text.h"

namespace npu::rpc {

namespace {

bool Serves(const graph::Plan& plan, const device::DevicePreset& preset, const graph::PlanOptions& options) {
  return plan.preset.name == preset.name && (options.fuse ? plan.fusion_ran : !plan.fused);
}

}  // namespace

absl::StatusOr<std::shared_ptr<const graph::Plan>> RegisteredGraph::PlanFor(const device::DevicePreset& preset,
                                                                            const graph::PlanLimits& limits,
                                                                            const graph::PlanOptions& options) {
  {
    MutexLock lock(&mu_);
    for (const auto& p : plans_) {
      if (Serves(*p, preset, options)) return p;
    }
  }
  // Planned outside the lock (it may take a while); two first runs on a new
  // preset may both plan, and the first to finish is kept.
  auto plan = graph::BuildPlan(graph_, preset, limits, options);
  if (!plan.ok()) return plan.status();
  MutexLock lock(&mu_);
  for (const auto& p : plans_) {
    if (Serves(*p, preset, options)) return p;
  }
  plans_.push_back(*plan);
  return *plan;
}

std::string GraphStore::Add(const std::string& tenant, std::shared_ptr<const graph::Plan> plan) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  const std::string id = absl::StrFormat("g-%016x%016x", rng(), rng());
  auto entry = std::make_shared<RegisteredGraph>(std::move(plan));
  MutexLock lock(&mu_);
  graphs_[tenant + '\0' + id] = std::move(entry);
  return id;
}

absl::StatusOr<std::shared_ptr<RegisteredGraph>> GraphStore::Get(const std::string& tenant, const std::string& id) {
  MutexLock lock(&mu_);
  auto it = graphs_.find(tenant + '\0' + id);
  if (it == graphs_.end()) return absl::NotFoundError(absl::StrCat("graph id ", graph::Quoted(id), " not found"));
  return it->second;
}

absl::Status GraphStore::Remove(const std::string& tenant, const std::string& id) {
  std::shared_ptr<RegisteredGraph> removed;  // destroyed after the lock is released
  MutexLock lock(&mu_);
  auto it = graphs_.find(tenant + '\0' + id);
  if (it == graphs_.end()) return absl::NotFoundError(absl::StrCat("graph id ", graph::Quoted(id), " not found"));
  removed = std::move(it->second);
  graphs_.erase(it);
  return absl::OkStatus();
}

std::vector<std::pair<std::string, std::shared_ptr<RegisteredGraph>>> GraphStore::List(const std::string& tenant) {
  std::vector<std::pair<std::string, std::shared_ptr<RegisteredGraph>>> out;
  const std::string prefix = tenant + '\0';
  {
    MutexLock lock(&mu_);
    for (const auto& [key, entry] : graphs_) {
      if (key.compare(0, prefix.size(), prefix) == 0) out.emplace_back(key.substr(prefix.size()), entry);
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

}  // namespace npu::rpc
