#include "server/device/device_executor.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "kernels/openmp.h"
#include "server/device/cpu_affinity.h"

namespace npu::device {
namespace {
// How often a waiting caller asks whether its client gave up: short, so a job
// that is already done returns at once, and a deadline is noticed within a few ms.
constexpr auto kPoll = std::chrono::milliseconds(2);
}  // namespace

DeviceExecutor::DeviceExecutor(size_t max_queue, int omp_threads, std::vector<int> cpus)
    : max_queue_(max_queue),
      worker_([this, omp_threads, cpus = std::move(cpus)] { WorkerLoop(omp_threads, cpus); }) {}

DeviceExecutor::~DeviceExecutor() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_.store(true);
  }
  cv_.notify_all();
  worker_.join();
}

absl::Status DeviceExecutor::Admit() {
  if (stopping_.load()) return absl::UnavailableError("device is shutting down");
  size_t n = waiting_.load();
  do {
    if (n >= max_queue_) {
      return absl::ResourceExhaustedError(
          absl::StrCat("device queue is full (", max_queue_, " runs waiting); retry later"));
    }
  } while (!waiting_.compare_exchange_weak(n, n + 1));
  return absl::OkStatus();
}

absl::Status DeviceExecutor::RunSync(std::function<void()> job, const GaveUp& gave_up, std::atomic<bool>* cancel,
                                     bool small) {
  // Asked only of jobs worth stopping: with the sync API, IsCancelled polls the
  // call's completion queue, which costs more than a small job.
  if (gave_up && !small) {
    if (absl::Status s = gave_up(); !s.ok()) return s;
  }
  if (absl::Status s = Admit(); !s.ok()) return s;
  return small ? RunOnCaller(job, gave_up) : RunOnWorker(std::move(job), gave_up, cancel);
}

bool DeviceExecutor::TryHoldFor(std::chrono::milliseconds wait) {
  std::unique_lock<std::mutex> lock(hold_mu_);
  if (!freed_.wait_for(lock, wait, [this] { return !held_; })) return false;
  held_ = true;
  return true;
}

void DeviceExecutor::Hold() {
  std::unique_lock<std::mutex> lock(hold_mu_);
  freed_.wait(lock, [this] { return !held_; });
  held_ = true;
}

void DeviceExecutor::Release() {
  {
    std::lock_guard<std::mutex> lock(hold_mu_);
    held_ = false;
  }
  freed_.notify_one();
}

absl::Status DeviceExecutor::RunOnCaller(const std::function<void()>& job, const GaveUp& gave_up) {
  while (!TryHoldFor(kPoll)) {
    absl::Status abandoned = gave_up ? gave_up() : absl::OkStatus();
    if (abandoned.ok() && stopping_.load()) abandoned = absl::UnavailableError("device is shutting down");
    if (!abandoned.ok()) {
      waiting_.fetch_sub(1);
      return abandoned;
    }
  }
  waiting_.fetch_sub(1);
  // One thread: a parallel region here must not start a second OpenMP team
  // beside the worker's (per-thread ICV, set once per calling thread).
  thread_local bool single_threaded = (omp_set_num_threads(1), true);
  (void)single_threaded;
  job();
  Release();
  return absl::OkStatus();
}

absl::Status DeviceExecutor::RunOnWorker(std::function<void()> job, const GaveUp& gave_up,
                                         std::atomic<bool>* cancel) {
  std::packaged_task<void()> task(std::move(job));
  std::future<void> done = task.get_future();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_.load()) {
      waiting_.fetch_sub(1);
      return absl::UnavailableError("device is shutting down");
    }
    queue_.push_back(&task);
    cv_.notify_one();  // under the lock: once the job is done the executor may go
  }
  if (!gave_up) {
    done.get();
    return absl::OkStatus();
  }
  absl::Status abandoned;
  while (done.wait_for(kPoll) != std::future_status::ready) {
    abandoned = gave_up();
    if (abandoned.ok()) continue;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = std::find(queue_.begin(), queue_.end(), &task);
      if (it != queue_.end()) {
        queue_.erase(it);  // never started: skip it
        waiting_.fetch_sub(1);
        return abandoned;
      }
    }
    if (cancel != nullptr) cancel->store(true);
    break;
  }
  done.get();
  return abandoned;
}

size_t DeviceExecutor::queue_depth() const { return waiting_.load(); }

void DeviceExecutor::WorkerLoop(int omp_threads, const std::vector<int>& cpus) {
  if (omp_threads > 0) omp_set_num_threads(omp_threads);  // per-thread ICV: set on this thread
  if (absl::Status s = PinOpenMpTeam(cpus, omp_threads); !s.ok()) {
    std::fprintf(stderr, "npu-server: %s; compute threads left unpinned\n", std::string(s.message()).c_str());
  }
  for (;;) {
    std::packaged_task<void()>* task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_.load() || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping and drained
      task = queue_.front();
      queue_.pop_front();
    }
    Hold();
    waiting_.fetch_sub(1);
    (*task)();  // its caller waits on the future, so the task lives until this returns
    Release();
  }
}

}  // namespace npu::device
