#include "server/core/graph_store.h"

#include <algorithm>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "server/graph/bounded_text.h"

namespace npu::core {

std::string GraphStore::Add(const std::string& tenant, std::shared_ptr<RegisteredGraph> graph,
                            const std::string& content_sha256) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  const std::string id = absl::StrFormat("g-%016x%016x", rng(), rng());
  MutexLock lock(&mu_);
  if (!content_sha256.empty()) {
    auto [it, added] = by_hash_.emplace(tenant + '\0' + content_sha256, id);
    if (!added) {
      ++graphs_.at(tenant + '\0' + it->second).registrations;
      return it->second;
    }
  }
  graphs_[tenant + '\0' + id] = Entry{std::move(graph), content_sha256};
  return id;
}

absl::StatusOr<std::shared_ptr<RegisteredGraph>> GraphStore::Get(const std::string& tenant, const std::string& id) {
  MutexLock lock(&mu_);
  auto it = graphs_.find(tenant + '\0' + id);
  if (it == graphs_.end()) return absl::NotFoundError(absl::StrCat("graph id ", graph::Quoted(id), " not found"));
  return it->second.graph;
}

absl::StatusOr<std::pair<std::string, std::shared_ptr<RegisteredGraph>>> GraphStore::Reregister(
    const std::string& tenant, const std::string& content_sha256) {
  MutexLock lock(&mu_);
  auto it = by_hash_.find(tenant + '\0' + content_sha256);
  if (it == by_hash_.end()) {
    return absl::NotFoundError(absl::StrCat("no graph registered with content hash ", graph::Quoted(content_sha256)));
  }
  Entry& entry = graphs_.at(tenant + '\0' + it->second);
  ++entry.registrations;
  return std::make_pair(it->second, entry.graph);
}

absl::Status GraphStore::Remove(const std::string& tenant, const std::string& id) {
  Entry removed;  // destroyed after the lock is released
  MutexLock lock(&mu_);
  auto it = graphs_.find(tenant + '\0' + id);
  if (it == graphs_.end()) return absl::NotFoundError(absl::StrCat("graph id ", graph::Quoted(id), " not found"));
  if (--it->second.registrations > 0) return absl::OkStatus();
  removed = std::move(it->second);
  graphs_.erase(it);
  if (!removed.hash.empty()) by_hash_.erase(tenant + '\0' + removed.hash);
  return absl::OkStatus();
}

int64_t GraphStore::registrations(const std::string& tenant, const std::string& id) {
  MutexLock lock(&mu_);
  auto it = graphs_.find(tenant + '\0' + id);
  return it == graphs_.end() ? 0 : it->second.registrations;
}

std::vector<std::pair<std::string, std::shared_ptr<RegisteredGraph>>> GraphStore::List(const std::string& tenant) {
  std::vector<std::pair<std::string, std::shared_ptr<RegisteredGraph>>> out;
  const std::string prefix = tenant + '\0';
  {
    MutexLock lock(&mu_);
    for (const auto& [key, entry] : graphs_) {
      if (key.compare(0, prefix.size(), prefix) == 0) out.emplace_back(key.substr(prefix.size()), entry.graph);
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

}  // namespace npu::core
