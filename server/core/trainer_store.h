// The trainers of each tenant (TrainingService), by random id, at most
// `max_per_tenant` each: a trainer holds its model's parameters and optimizer
// state on every device it trains on, so a tenant cannot make them without
// bound.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "base/mutex.h"
#include "server/train/trainer.h"

namespace npu::core {

struct HostedTrainer {
  std::unique_ptr<train::Trainer> trainer;
  std::string onnx_model;                 // the serialized model it was made from, when ONNX (for Export)
  std::vector<std::string> device_names;  // "npu:N", in the trainer's device order
};

class TrainerStore {
 public:
  explicit TrainerStore(size_t max_per_tenant) : max_per_tenant_(max_per_tenant) {}

  // A new id; RESOURCE_EXHAUSTED when the tenant has max_per_tenant trainers.
  absl::StatusOr<std::string> Add(const std::string& tenant, std::shared_ptr<HostedTrainer> trainer);
  absl::StatusOr<std::shared_ptr<HostedTrainer>> Get(const std::string& tenant, const std::string& id);
  absl::Status Remove(const std::string& tenant, const std::string& id);

 private:
  const size_t max_per_tenant_;
  Mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<HostedTrainer>> trainers_ ABSL_GUARDED_BY(mu_);  // tenant '\0' id
  std::unordered_map<std::string, size_t> count_ ABSL_GUARDED_BY(mu_);  // per tenant
};

}  // namespace npu::core
