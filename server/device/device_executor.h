// Runs jobs on one device, one at a time. Large jobs go to the device's worker
// thread, whose OpenMP team does the compute, so concurrent requests queue
// here instead of each starting its own parallel region (2 host cores would be
// oversubscribed). Small jobs run on the calling thread. Waiting is bounded:
// admission control.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/status/status.h"

namespace npu::device {

class DeviceExecutor {
 public:
  // `omp_threads` <= 0 keeps the OpenMP default (or one thread per CPU of
  // `cpus`); non-empty `cpus` pins the worker's OpenMP team (cpu_affinity.h).
  DeviceExecutor(size_t max_queue, int omp_threads, std::vector<int> cpus = {});
  ~DeviceExecutor();  // finishes queued jobs, then joins
  DeviceExecutor(const DeviceExecutor&) = delete;
  DeviceExecutor& operator=(const DeviceExecutor&) = delete;

  // Polled (every few ms) by the caller waiting in RunSync: non-OK once the
  // caller has given up (its client cancelled, its deadline passed).
  using GaveUp = std::function<absl::Status()>;

  // Runs `job` while holding the device and waits for it. RESOURCE_EXHAUSTED,
  // without running it, when `max_queue` jobs are already waiting; UNAVAILABLE
  // once the executor is stopping.
  // With `gave_up`: a job still waiting when it turns non-OK is dropped and its
  // status returned at once; a running one gets `*cancel` set (the job checks
  // it between nodes and tiles) and its end is awaited, then the status returned.
  // With `small` (a job of a few microseconds) the caller runs it itself with
  // one OpenMP thread: handing it to the worker and back costs two thread
  // wake-ups, more than the work, and waking the worker's team costs more still.
  absl::Status RunSync(std::function<void()> job, const GaveUp& gave_up = nullptr,
                       std::atomic<bool>* cancel = nullptr, bool small = false);

  // Jobs waiting for the device: queued for the worker or small ones waiting for
  // the device to be free.
  size_t queue_depth() const;

 private:
  absl::Status RunOnCaller(const std::function<void()>& job, const GaveUp& gave_up);
  absl::Status RunOnWorker(std::function<void()> job, const GaveUp& gave_up, std::atomic<bool>* cancel);
  // Counts one more waiter unless `max_queue_` already wait.
  absl::Status Admit();
  void WorkerLoop(int omp_threads, const std::vector<int>& cpus);

  const size_t max_queue_;
  std::atomic<size_t> waiting_{0};  // queued for the worker + small jobs waiting for the device
  std::atomic<bool> stopping_{false};
  // The device is held by whoever uses the core pool. Taken, not handed off: a
  // small job on a thread already running takes a free device without sleeping.
  // (A flag under a mutex rather than std::timed_mutex, whose timed lock
  // ThreadSanitizer cannot see.)
  bool TryHoldFor(std::chrono::milliseconds wait);
  void Hold();
  void Release();
  std::mutex hold_mu_;
  std::condition_variable freed_;
  bool held_ = false;

  mutable std::mutex mu_;  // guards queue_
  std::condition_variable cv_;
  std::deque<std::packaged_task<void()>*> queue_;  // owned by the waiting RunOnWorker callers
  std::thread worker_;
};

}  // namespace npu::device
