// Registered graphs (validated plans) by id, per tenant.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "absl/status/statusor.h"
#include "server/graph/plan.h"

namespace npu::rpc {

class GraphStore {
 public:
  std::string Add(const std::string& tenant, std::shared_ptr<const graph::Plan> plan);
  absl::StatusOr<std::shared_ptr<const graph::Plan>> Get(const std::string& tenant, const std::string& id);
  absl::Status Remove(const std::string& tenant, const std::string& id);

 private:
  std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<const graph::Plan>> plans_;  // by tenant '\0' id
};

}  // namespace npu::rpc
