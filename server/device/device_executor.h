// Runs jobs on one device, one at a time. Large jobs go to the device's worker
// thread, whose OpenMP team does the compute, so concurrent requests queue
// here instead of each starting its own parallel region (2 host cores would be
// oversubscribed). A small job that finds the device free runs at once on the
// submitting thread. Waiting is bounded (admission control), cancellation is
// pushed through a CancelToken, and nothing a job throws can leave the device
// held.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "base/mutex.h"
#include "server/device/cancel_token.h"

namespace npu::device {

class DeviceExecutor {
 public:
  struct Job {
    std::function<void()> run;                // runs while holding the device
    // Called exactly once, when `run` has returned (or the job was dropped or
    // refused). The device may still be held then by a thread running the
    // small jobs queued behind this one, so `done` should only hand the result on.
    std::function<void(absl::Status)> done;
    std::shared_ptr<CancelToken> cancel;      // optional: a queued job is dropped when it fires
    // A job of a few microseconds: handing it to the worker and back costs two
    // thread wake-ups, more than the work, so when the device is free the
    // submitting thread runs it itself with one OpenMP thread.
    bool small = false;
  };

  // `omp_threads` <= 0 keeps the OpenMP default (or one thread per CPU of
  // `cpus`); non-empty `cpus` pins the worker's OpenMP team (cpu_affinity.h).
  DeviceExecutor(size_t max_queue, int omp_threads, std::vector<int> cpus = {});
  ~DeviceExecutor();  // runs the jobs still queued, then joins
  DeviceExecutor(const DeviceExecutor&) = delete;
  DeviceExecutor& operator=(const DeviceExecutor&) = delete;

  // Queues `job` (or runs it now, see Job::small) and returns. `done` gets:
  // OK after `run` returned; the token's reason if it fired before `run`
  // started; RESOURCE_EXHAUSTED when `max_queue` jobs already wait;
  // UNAVAILABLE once the executor is stopping; RESOURCE_EXHAUSTED or INTERNAL
  // when `run` threw (the device is released either way).
  void Submit(Job job);
  // Submit and wait for `done`.
  absl::Status RunSync(std::function<void()> run, std::shared_ptr<CancelToken> cancel = nullptr, bool small = false);

  // Jobs waiting for the device.
  size_t queue_depth() const { return waiting_.load(); }
  // How long the job now running has held the device; zero when it is free.
  std::chrono::nanoseconds held_for() const;

 private:
  struct Queued {
    uint64_t id;
    Job job;
  };
  // Holding the device: a flag under a mutex rather than std::timed_mutex,
  // whose timed lock ThreadSanitizer cannot see.
  bool TryHold();
  void Hold();
  void Release();
  // Runs job.run holding the device (already taken), releases it, calls done.
  void RunHeld(Job& job);
  // Runs `first` (the device already taken) on the submitting thread, then the
  // small jobs queued behind it (at most kMaxHelped), then releases the device.
  void RunSmallJobsHeld(Job first);
  static constexpr int kMaxHelped = 16;
  bool Held();
  // Drops queued job `id` (its token fired) and calls its done.
  void DropQueued(uint64_t id);
  void WorkerLoop(int omp_threads, const std::vector<int>& cpus);

  const size_t max_queue_;
  std::atomic<size_t> waiting_{0};
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> next_id_{1};
  std::atomic<int64_t> held_since_ns_{0};  // steady_clock ns when the running job took the device; 0 = free

  Mutex hold_mu_;
  CondVar freed_;
  bool held_ ABSL_GUARDED_BY(hold_mu_) = false;

  Mutex mu_;
  CondVar cv_;
  std::deque<std::unique_ptr<Queued>> queue_ ABSL_GUARDED_BY(mu_);
  std::thread worker_;  // last: it starts once the members above exist
};

}  // namespace npu::device
