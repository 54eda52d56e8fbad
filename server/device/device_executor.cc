#include "server/device/device_executor.h"

#include <cstdio>
#include <future>
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

absl::Status DeviceExecutor::RunSync(std::function<void()> job) {
  std::packaged_task<void()> task(std::move(job));
  std::future<void> done = task.get_future();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return absl::UnavailableError("device is shutting down");
    if (queue_.size() >= max_queue_) {
      return absl::ResourceExhaustedError(
          absl::StrCat("device queue is full (", max_queue_, " runs waiting); retry later"));
    }
    queue_.emplace_back([&task] { task(); });
  }
  cv_.notify_one();
  done.get();
  return absl::OkStatus();
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
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping and drained
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    job();
  }
}

}  // namespace npu::device
