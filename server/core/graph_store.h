// Registered graphs by id, per tenant (registered_graph.h: a graph and its
// plans). A registration may carry the SHA-256 of the model's bytes: the same
// tenant registering the same content again gets the same id back, and
// FindByHash lets a client skip sending a model the server already has.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "base/mutex.h"
#include "server/core/registered_graph.h"

namespace npu::core {

class GraphStore {
 public:
  // Stores `graph` under a new id, or returns the id `tenant` already has for
  // `content_sha256` (then `graph` is dropped). Empty hash: always a new id.
  std::string Add(const std::string& tenant, std::shared_ptr<RegisteredGraph> graph,
                  const std::string& content_sha256 = "");
  absl::StatusOr<std::shared_ptr<RegisteredGraph>> Get(const std::string& tenant, const std::string& id);
  // NOT_FOUND when `tenant` has registered no model with this hash.
  absl::StatusOr<std::pair<std::string, std::shared_ptr<RegisteredGraph>>> FindByHash(
      const std::string& tenant, const std::string& content_sha256);
  absl::Status Remove(const std::string& tenant, const std::string& id);
  // The tenant's graphs, by id, in id order.
  std::vector<std::pair<std::string, std::shared_ptr<RegisteredGraph>>> List(const std::string& tenant);

 private:
  struct Entry {
    std::shared_ptr<RegisteredGraph> graph;
    std::string hash;
  };
  Mutex mu_;
  std::unordered_map<std::string, Entry> graphs_ ABSL_GUARDED_BY(mu_);       // tenant '\0' id
  std::unordered_map<std::string, std::string> by_hash_ ABSL_GUARDED_BY(mu_);  // tenant '\0' hash -> id
};

}  // namespace npu::core
