#include "server/core/trainer_store.h"

#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "server/graph/bounded_text.h"

namespace npu::core {

absl::StatusOr<std::string> TrainerStore::Add(const std::string& tenant, std::shared_ptr<HostedTrainer> trainer) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  const std::string id = absl::StrFormat("t-%016x%016x", rng(), rng());
  MutexLock lock(&mu_);
  size_t& count = count_[tenant];
  if (count >= max_per_tenant_) {
    return absl::ResourceExhaustedError(absl::StrCat("this tenant has ", count, " trainers, the most it may have (",
                                                     "--max_trainers_per_tenant); delete one first"));
  }
  ++count;
  trainers_[tenant + '\0' + id] = std::move(trainer);
  return id;
}

absl::StatusOr<std::shared_ptr<HostedTrainer>> TrainerStore::Get(const std::string& tenant, const std::string& id) {
  MutexLock lock(&mu_);
  auto it = trainers_.find(tenant + '\0' + id);
  if (it == trainers_.end()) return absl::NotFoundError(absl::StrCat("trainer id ", graph::Quoted(id), " not found"));
  return it->second;
}

absl::Status TrainerStore::Remove(const std::string& tenant, const std::string& id) {
  std::shared_ptr<HostedTrainer> removed;  // destroyed after the lock is released
  MutexLock lock(&mu_);
  auto it = trainers_.find(tenant + '\0' + id);
  if (it == trainers_.end()) return absl::NotFoundError(absl::StrCat("trainer id ", graph::Quoted(id), " not found"));
  removed = std::move(it->second);
  trainers_.erase(it);
  if (--count_[tenant] == 0) count_.erase(tenant);
  return absl::OkStatus();
}

}  // namespace npu::core
