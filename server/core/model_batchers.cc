#include "server/core/model_batchers.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/graph/bounded_text.h"

namespace npu::core {

absl::StatusOr<BatchPolicy> BatchPolicyOf(const inference::ModelConfig& config, int device_count) {
  BatchPolicy p;
  const inference::ModelDynamicBatching& b = config.dynamic_batching();
  p.max_batch_size = std::max(1, config.max_batch_size());
  for (int32_t size : b.preferred_batch_size()) p.preferred_batch_sizes.push_back(size);
  std::sort(p.preferred_batch_sizes.begin(), p.preferred_batch_sizes.end());
  p.preferred_batch_sizes.erase(std::unique(p.preferred_batch_sizes.begin(), p.preferred_batch_sizes.end()),
                                p.preferred_batch_sizes.end());
  p.max_queue_delay = std::chrono::microseconds(b.max_queue_delay_microseconds());
  p.preserve_ordering = b.preserve_ordering();
  if (b.priority_levels() > 0) {
    p.priority_levels = b.priority_levels();
    p.default_priority = b.default_priority_level();
  }
  const inference::ModelQueuePolicy& q = b.default_queue_policy();
  p.timeout_action = q.timeout_action() == inference::ModelQueuePolicy::DELAY ? BatchPolicy::TimeoutAction::kDelay
                                                                              : BatchPolicy::TimeoutAction::kReject;
  p.default_timeout = std::chrono::microseconds(q.default_timeout_microseconds());
  p.allow_timeout_override = q.allow_timeout_override();
  p.max_queue_size = q.max_queue_size();
  for (int i = 0; i < config.instance_group_size(); ++i) {
    const inference::ModelInstanceGroup& g = config.instance_group(i);
    const int count = g.count() > 0 ? g.count() : 1;
    std::vector<int> devices(g.gpus().begin(), g.gpus().end());
    if (devices.empty()) {
      for (int d = 0; d < device_count; ++d) devices.push_back(d);
    }
    for (int d : devices) {
      if (d >= device_count) {
        return absl::InvalidArgumentError(absl::StrCat("instance_group #", i + 1, " places instances on npu:", d,
                                                       "; this server has ", device_count, " device",
                                                       device_count == 1 ? "" : "s"));
      }
      for (int c = 0; c < count; ++c) p.instance_devices.push_back(d);
    }
  }
  if (config.instance_group_size() == 0) {
    for (int d = 0; d < device_count; ++d) p.instance_devices.push_back(d);
  }
  return p;
}

bool BatchesDynamically(const inference::ModelConfig* config) {
  return config != nullptr && config->max_batch_size() > 0 && config->has_dynamic_batching();
}

absl::StatusOr<std::shared_ptr<DynamicBatcher>> ModelBatchers::For(const std::shared_ptr<RegisteredGraph>& graph,
                                                                   const inference::ModelConfig& config,
                                                                   const std::string& model, const std::string& version,
                                                                   int device_count,
                                                                   const DynamicBatcher::Runner& runner) {
  std::vector<std::shared_ptr<DynamicBatcher>> gone;  // joined after the lock
  MutexLock lock(&mu_);
  for (auto it = held_.begin(); it != held_.end();) {
    if (it->second.graph.expired()) {
      gone.push_back(std::move(it->second.batcher));
      it = held_.erase(it);
    } else {
      ++it;
    }
  }
  if (auto it = held_.find(graph.get()); it != held_.end()) return it->second.batcher;
  const std::string name = absl::StrCat("model ", graph::Quoted(model), " version ", graph::Quoted(version));
  auto policy = BatchPolicyOf(config, device_count);
  if (!policy.ok()) return absl::InvalidArgumentError(absl::StrCat(name, ": ", policy.status().message()));
  auto batcher = std::make_shared<DynamicBatcher>(*std::move(policy), name, runner);
  held_[graph.get()] = Held{graph, model, version, batcher};
  return batcher;
}

std::map<std::pair<std::string, std::string>, size_t> ModelBatchers::Queued() const {
  std::map<std::pair<std::string, std::string>, size_t> out;
  MutexLock lock(&mu_);
  for (const auto& [key, held] : held_) {
    if (!held.graph.expired()) out[{held.model, held.version}] += held.batcher->queued();
  }
  return out;
}

}  // namespace npu::core
