// A model version's dynamic batcher (Triton's scheduler): requests queue by
// priority level and are merged into one execution on a free instance.
//
// Forming a batch (docs/serving.md, "Dynamic batching"): the queue is read in
// order (level 1 first; within a level by arrival, requests delayed by their
// timeout last). From its head, requests join while their merge key (dtypes,
// non-batch dims, device) equals the head's and the rows stay within
// max_batch_size; the first that cannot join ends the run. The longest run
// from the head whose rows make a preferred size goes at once (Triton's
// rule); without one, the whole run goes when it holds max_batch_size, when
// the next request cannot join, or when the head has waited
// max_queue_delay, and otherwise the batcher waits for more requests. A
// batch starts only on a free instance (of its device), so requests gather
// while the instances compute.
//
// A request cancelled or timed out while it waits leaves the queue and is
// answered at once; the others are not touched. With preserve_ordering,
// answers are released in the order the requests arrived.
//
// Thread-safe. One scheduling thread per batcher. The runner is called on it
// and must not block for the run: it calls `done` once, from any thread. The
// destructor refuses what waits (UNAVAILABLE) and waits for the runs started.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "base/mutex.h"
#include "server/core/batch_policy.h"
#include "server/device/cancel_token.h"

namespace npu::core {

using Clock = std::chrono::steady_clock;

// One request in a batcher's queue; the frontend-facing part (its bound
// inputs, its call) lives in the subclass the runner knows.
class BatchEntry {
 public:
  virtual ~BatchEntry() = default;
  // Answers the request without running it: cancelled, timed out, the queue
  // full, or the batcher stopping.
  virtual void Refuse(absl::Status why) = 0;

  int64_t rows = 1;       // its batch dim
  std::string merge_key;  // requests merge only with equal keys
  int device = -1;        // the device index it must run on; -1: any instance's
  uint64_t priority = 0;  // 0: the model's default level
  std::chrono::microseconds timeout{0};  // asked by the request; 0: the model's default
  std::shared_ptr<device::CancelToken> cancel;
  // Set by the batcher.
  Clock::time_point enqueued, dispatched;

 private:
  friend class DynamicBatcher;
  uint64_t seq_ = 0;
  uint64_t level_ = 1;
  Clock::time_point deadline_ = Clock::time_point::max();
  bool delayed_ = false;
};

class DynamicBatcher {
 public:
  using Answer = std::function<void()>;  // delivers one request's answer
  // Called with the answers of a batch, one per request in its order (null
  // for a request answered already).
  using BatchDone = std::function<void(std::vector<Answer> answers)>;
  using Runner =
      std::function<void(std::vector<std::shared_ptr<BatchEntry>> batch, int device, BatchDone done)>;

  // `name` is how refusals name the model ("model \"mlp\" version \"1\"").
  DynamicBatcher(BatchPolicy policy, std::string name, Runner runner);
  ~DynamicBatcher();
  DynamicBatcher(const DynamicBatcher&) = delete;
  DynamicBatcher& operator=(const DynamicBatcher&) = delete;

  const BatchPolicy& policy() const { return policy_; }

  // Queues the request, or refuses it at once (its level's queue full, its
  // device without an instance, cancelled already).
  void Enqueue(std::shared_ptr<BatchEntry> entry);

  // Requests waiting now (not yet in a batch).
  size_t queued() const;

 private:
  struct Level {
    std::deque<std::shared_ptr<BatchEntry>> ready, delayed;
    size_t size() const { return ready.size() + delayed.size(); }
  };
  struct Formed {
    std::vector<std::shared_ptr<BatchEntry>> batch;
    int instance = -1;
    Clock::time_point wake = Clock::time_point::max();  // when nothing goes now
  };

  void Loop();
  // Applies timeouts due by `now`: refused ones are moved to `refused`.
  void Expire(Clock::time_point now, std::vector<std::shared_ptr<BatchEntry>>& refused)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Formed Form(Clock::time_point now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  int FreeInstance(int device) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Removes the entry from the queue; null when it is not there.
  std::shared_ptr<BatchEntry> Take(const BatchEntry* entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Cancelled(const BatchEntry* entry);
  void Finished(int instance, std::vector<std::shared_ptr<BatchEntry>> batch, std::vector<Answer> answers);
  // Answers in arrival order when the policy preserves it, else at once.
  void Release(const std::vector<uint64_t>& seqs, std::vector<Answer> answers);
  void RefuseAll(std::vector<std::shared_ptr<BatchEntry>> entries, const absl::Status& why);

  const BatchPolicy policy_;
  const std::string name_;
  const Runner runner_;

  mutable Mutex mu_;
  CondVar changed_;
  std::vector<Level> levels_ ABSL_GUARDED_BY(mu_);
  std::vector<bool> busy_ ABSL_GUARDED_BY(mu_);  // per instance
  size_t running_ ABSL_GUARDED_BY(mu_) = 0;      // batches started and not finished
  uint64_t next_seq_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;

  // preserve_ordering: answers held until every earlier request's went.
  Mutex order_mu_;
  std::map<uint64_t, Answer> held_ ABSL_GUARDED_BY(order_mu_);
  uint64_t next_release_ ABSL_GUARDED_BY(order_mu_) = 0;
  bool releasing_ ABSL_GUARDED_BY(order_mu_) = false;

  std::thread thread_;
};

}  // namespace npu::core
