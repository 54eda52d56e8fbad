// A model's dynamic batching rules, as Triton gives them meaning, read once
// from its config.pbtxt (dynamic_batching, max_batch_size, instance_group:
// BatchPolicyOf in model_batchers.h). docs/serving.md ("Dynamic batching")
// states the rules for users.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>


namespace npu::core {

struct BatchPolicy {
  int64_t max_batch_size = 1;
  std::vector<int64_t> preferred_batch_sizes;  // ascending, unique
  std::chrono::microseconds max_queue_delay{0};
  bool preserve_ordering = false;
  // Levels 1..priority_levels, 1 the highest. A request's priority of 0 or
  // past the levels takes default_priority (Triton's rule).
  uint64_t priority_levels = 1;
  uint64_t default_priority = 1;
  // A request that waits past its timeout is refused (kReject, UNAVAILABLE)
  // or served after the requests of its level that have not (kDelay).
  enum class TimeoutAction { kReject, kDelay };
  TimeoutAction timeout_action = TimeoutAction::kReject;
  std::chrono::microseconds default_timeout{0};  // 0: none
  bool allow_timeout_override = false;           // a request may shorten it, never lengthen it
  uint32_t max_queue_size = 0;                   // requests waiting per level; 0: no limit
  // Executions of the model at once: an instance's device index per
  // instance (instance_group: `count` on each of `gpus`, default every
  // device; without instance_group, one per device).
  std::vector<int> instance_devices;

  uint64_t LevelOf(uint64_t priority) const {
    return priority == 0 || priority > priority_levels ? default_priority : priority;
  }
  // The queue timeout of a request asking for `requested` (0: none asked).
  std::chrono::microseconds TimeoutOf(std::chrono::microseconds requested) const;
};

}  // namespace npu::core
