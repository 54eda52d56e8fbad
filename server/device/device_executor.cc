#include "server/device/device_executor.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include <omp.h>

#include "absl/strings/str_cat.h"
#include "server/device/cpu_affinity.h"

namespace npu::device {

DeviceExecutor::DeviceExecutor(size_t max_queue, int omp_threads, std::vector<int> cpus)
    : max_queue_(max_queue),
      worker_([this, omp_threads, cpus = std::move(cpus)] { WorkerLoop(omp_threads, cpus); }) {}

DeviceExecutor::~DeviceExecutor() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  worker_.join();
}

bool DeviceExecutor::TryRunInline(std::function<void()>& job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ || busy_ || !queue_.empty()) return false;
    busy_ = true;
  }
  // One thread: a parallel region here must not start a second OpenMP team
  // beside the worker's (per-thread ICV, set once per calling thread).
  thread_local bool single_threaded = (omp_set_num_threads(1), true);
  (void)single_threaded;
  job();
  // Small runs that queued meanwhile run here too, while the device is held:
  // their callers then wake once, instead of the worker waking first. A few at
  // most, so this caller's own answer is not held back long.
  bool waiting;
  for (int served = 0;; ++served) {
    Queued next{};
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (served >= 8 || queue_.empty() || !queue_.front().small) {
        busy_ = false;
        waiting = !queue_.empty();
        break;
      }
      next = queue_.front();
      queue_.pop_front();
    }
    (*next.task)();
  }
  if (waiting) cv_.notify_all();
  return true;
}

absl::Status DeviceExecutor::RunSync(std::function<void()> job, const GaveUp& gave_up, std::atomic<bool>* cancel,
                                     bool small) {
  if (small) {
    if (gave_up) {
      if (absl::Status s = gave_up(); !s.ok()) return s;
    }
    if (TryRunInline(job)) return absl::OkStatus();
  }
  std::packaged_task<void()> task(std::move(job));
  std::future<void> done = task.get_future();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return absl::UnavailableError("device is shutting down");
    if (queue_.size() >= max_queue_) {
      return absl::ResourceExhaustedError(
          absl::StrCat("device queue is full (", max_queue_, " runs waiting); retry later"));
    }
    queue_.push_back(Queued{&task, small});
  }
  cv_.notify_one();
  if (!gave_up) {
    done.get();
    return absl::OkStatus();
  }
  // Short polls: a job that is already done returns at once, so quick runs pay nothing.
  constexpr auto kPoll = std::chrono::milliseconds(2);
  absl::Status abandoned;
  while (done.wait_for(kPoll) != std::future_status::ready) {
    abandoned = gave_up();
    if (abandoned.ok()) continue;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = std::find(queue_.begin(), queue_.end(), &task);
      if (it != queue_.end()) {
        queue_.erase(it);  // never started: skip it
        return abandoned;
      }
    }
    if (cancel != nullptr) cancel->store(true);
    break;
  }
  done.get();
  return abandoned;
}

size_t DeviceExecutor::queue_depth() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size();
}

void DeviceExecutor::WorkerLoop(int omp_threads, const std::vector<int>& cpus) {
  if (omp_threads > 0) omp_set_num_threads(omp_threads);  // per-thread ICV: set on this thread
  if (absl::Status s = PinOpenMpTeam(cpus, omp_threads); !s.ok()) {
    std::fprintf(stderr, "npu-server: %s; compute threads left unpinned\n", std::string(s.message()).c_str());
  }
  const int team = omp_get_max_threads();  // as set above
  for (;;) {
    Queued job{};
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return (stopping_ && !busy_) || (!queue_.empty() && !busy_); });
      if (queue_.empty()) return;  // stopping and drained
      job = queue_.front();
      queue_.pop_front();
      busy_ = true;
    }
    // A small run on one thread: waking the team costs more than the work, and
    // its threads would then spin, taking the cores from the gRPC threads.
    if (job.small) omp_set_num_threads(1);
    (*job.task)();  // the caller waits on its future, so the task lives until this returns
    if (job.small) omp_set_num_threads(team);
    std::lock_guard<std::mutex> lock(mu_);
    busy_ = false;
  }
}

}  // namespace npu::device
