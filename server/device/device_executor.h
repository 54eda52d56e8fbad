// One worker thread per device runs jobs in arrival order. The compute inside a
// job uses the OpenMP team of that thread, so concurrent requests queue here
// instead of each starting its own parallel region (2 host cores would be
// oversubscribed). The queue is bounded: admission control.
#pragma once

#include <atomic>
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

  // Runs `job` on the worker thread and waits for it. RESOURCE_EXHAUSTED,
  // without running it, when `max_queue` jobs are already waiting.
  // With `gave_up`: a job still queued when it turns non-OK is dropped and its
  // status returned at once; a running one gets `*cancel` set (the job checks
  // it between nodes and tiles) and its end is awaited, then the status returned.
  // With `small` (a run of a few microseconds), when the device is idle and
  // nothing waits, the caller runs the job itself with one OpenMP thread:
  // handing it to the worker and back costs two thread wake-ups, more than
  // the work, and waking the worker's team costs more still.
  absl::Status RunSync(std::function<void()> job, const GaveUp& gave_up = nullptr,
                       std::atomic<bool>* cancel = nullptr, bool small = false);

  size_t queue_depth() const;

 private:
  void WorkerLoop(int omp_threads, const std::vector<int>& cpus);
  // Runs `job` on the calling thread if the device is idle; false if it was not.
  bool TryRunInline(std::function<void()>& job);

  const size_t max_queue_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  struct Queued {
    std::packaged_task<void()>* task;  // owned by the waiting RunSync caller
    bool small;
    bool operator==(const std::packaged_task<void()>* t) const { return task == t; }
  };
  std::deque<Queued> queue_;
  bool stopping_ = false;
  bool busy_ = false;  // a job runs, on the worker or inline: the core pool is taken
  std::thread worker_;
};

}  // namespace npu::device
