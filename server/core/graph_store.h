// Registered graphs by id, per tenant (registered_graph.h: a graph and its
// plans). A registration may carry the SHA-256 of the model's bytes: the same
// tenant registering the same content again gets the same id back, and
// Reregister lets a client skip sending a model the server already has.
//
// Registrations of one content are counted: two processes of a tenant (DDP
// ranks, replicas of a job) that register the same model share its id and
// plans, and one's Remove releases its registration only; the graph goes
// with the last one, so no caller's runs lose it from under them.
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
  // One registration: `graph` under a new id, or one more registration of the
  // id `tenant` already has for `content_sha256` (then `graph` is dropped).
  // Empty hash: always a new id.
  std::string Add(const std::string& tenant, std::shared_ptr<RegisteredGraph> graph,
                  const std::string& content_sha256 = "");
  // One more registration of the model `tenant` registered with this hash;
  // NOT_FOUND when it has none.
  absl::StatusOr<std::pair<std::string, std::shared_ptr<RegisteredGraph>>> Reregister(
      const std::string& tenant, const std::string& content_sha256);
  absl::StatusOr<std::shared_ptr<RegisteredGraph>> Get(const std::string& tenant, const std::string& id);
  // Releases one registration; the graph goes with the last (runs holding it finish).
  absl::Status Remove(const std::string& tenant, const std::string& id);
  // How many registrations hold `id` (0 when none).
  int64_t registrations(const std::string& tenant, const std::string& id);
  // The tenant's graphs, by id, in id order.
  std::vector<std::pair<std::string, std::shared_ptr<RegisteredGraph>>> List(const std::string& tenant);

 private:
  struct Entry {
    std::shared_ptr<RegisteredGraph> graph;
    std::string hash;
    int64_t registrations = 1;
  };
  Mutex mu_;
  std::unordered_map<std::string, Entry> graphs_ ABSL_GUARDED_BY(mu_);       // tenant '\0' id
  std::unordered_map<std::string, std::string> by_hash_ ABSL_GUARDED_BY(mu_);  // tenant '\0' hash -> id
};

}  // namespace npu::core
