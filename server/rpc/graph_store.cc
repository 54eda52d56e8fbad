#include "server/rpc/graph_store.h"

#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace npu::rpc {

std::string GraphStore::Add(const std::string& tenant, std::shared_ptr<const graph::Plan> plan) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  const std::string id = absl::StrFormat("g-%016x%016x", rng(), rng());
  std::lock_guard<std::mutex> lock(mu_);
  plans_[tenant + '\0' + id] = std::move(plan);
  return id;
}

absl::StatusOr<std::shared_ptr<const graph::Plan>> GraphStore::Get(const std::string& tenant, const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = plans_.find(tenant + '\0' + id);
  if (it == plans_.end()) return absl::NotFoundError(absl::StrCat("graph id \"", id, "\" not found"));
  return it->second;
}

absl::Status GraphStore::Remove(const std::string& tenant, const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (plans_.erase(tenant + '\0' + id) == 0) return absl::NotFoundError(absl::StrCat("graph id \"", id, "\" not found"));
  return absl::OkStatus();
}

}  // namespace npu::rpc
