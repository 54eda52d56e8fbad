#include "server/device/device_executor.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <future>
#include <new>
#include <string>

#include "absl/strings/str_cat.h"
#include "kernels/openmp.h"
#include "server/device/cpu_affinity.h"

namespace npu::device {
namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The last line of defence: what a job throws becomes its status. (The graph
// executor already turns an op's exception into a status naming the node.)
absl::Status RunCatching(const std::function<void()>& run) {
  try {
    run();
    return absl::OkStatus();
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError("the host ran out of memory while the device ran the job");
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("the device job failed: ", e.what()));
  } catch (...) {
    return absl::InternalError("the device job failed with an unknown exception");
  }
}

}  // namespace

DeviceExecutor::DeviceExecutor(size_t max_queue, int omp_threads, std::vector<int> cpus)
    : max_queue_(max_queue),
      worker_([this, omp_threads, cpus = std::move(cpus)] { WorkerLoop(omp_threads, cpus); }) {}

DeviceExecutor::~DeviceExecutor() {
  {
    MutexLock lock(&mu_);
    stopping_.store(true);
  }
  cv_.SignalAll();
  worker_.join();
}

bool DeviceExecutor::TryHold() {
  MutexLock lock(&hold_mu_);
  if (held_) return false;
  held_ = true;
  held_since_ns_.store(NowNs());
  return true;
}

void DeviceExecutor::Hold() {
  MutexLock lock(&hold_mu_);
  while (held_) freed_.Wait(&hold_mu_);
  held_ = true;
  held_since_ns_.store(NowNs());
}

void DeviceExecutor::Release() {
  {
    MutexLock lock(&hold_mu_);
    held_ = false;
    held_since_ns_.store(0);
  }
  freed_.Signal();
}

std::chrono::nanoseconds DeviceExecutor::held_for() const {
  const int64_t since = held_since_ns_.load();
  return std::chrono::nanoseconds(since == 0 ? 0 : std::max<int64_t>(0, NowNs() - since));
}

void DeviceExecutor::RunHeld(Job& job) {
  absl::Status s = RunCatching(job.run);
  Release();
  job.done(std::move(s));
}

void DeviceExecutor::Submit(Job job) {
  if (stopping_.load()) return job.done(absl::UnavailableError("device is shutting down"));
  if (job.cancel != nullptr && job.cancel->cancelled()) return job.done(job.cancel->reason());
  if (job.small && TryHold()) {
    // One thread: a parallel region here must not start a second OpenMP team
    // beside the worker's (per-thread ICV, set once per calling thread).
    thread_local bool single_threaded = (omp_set_num_threads(1), true);
    (void)single_threaded;
    return RunSmallJobsHeld(std::move(job));
  }
  size_t n = waiting_.load();
  do {
    if (n >= max_queue_) {
      return job.done(absl::ResourceExhaustedError(
          absl::StrCat("device queue is full (", max_queue_, " runs waiting); retry later")));
    }
  } while (!waiting_.compare_exchange_weak(n, n + 1));

  // The hook goes in before the job is queued: a token that fires in between
  // finds nothing to drop, and the worker drops the job when it comes to it.
  const uint64_t id = next_id_.fetch_add(1);
  std::shared_ptr<CancelToken> cancel = job.cancel;
  if (cancel != nullptr && !cancel->SetHook([this, id] { DropQueued(id); })) {
    waiting_.fetch_sub(1);
    return job.done(cancel->reason());
  }
  {
    MutexLock lock(&mu_);
    if (!stopping_.load()) {
      const bool small = job.small;
      queue_.push_back(std::make_unique<Queued>(Queued{id, std::move(job)}));
      // Under the lock: once the queue drains the executor may go. A small job
      // behind a holder needs no wake-up: every holder looks at the queue
      // before it lets go (RunSmallJobsHeld, the worker's loop).
      if (!small || !Held()) cv_.Signal();
      return;
    }
  }
  if (cancel != nullptr) cancel->ClearHook();
  waiting_.fetch_sub(1);
  job.done(absl::UnavailableError("device is shutting down"));
}

void DeviceExecutor::RunSmallJobsHeld(Job first) {
  Job* job = &first;
  std::unique_ptr<Queued> next;
  for (int helped = 0;; ++helped) {
    const bool dropped = job->cancel != nullptr && job->cancel->cancelled();
    job->done(dropped ? job->cancel->reason() : RunCatching(job->run));
    // Small jobs that queued meanwhile run here too: the worker's wake-up would
    // cost more than they do. Bounded, so this thread gets back to its calls.
    // Checked and released under mu_, so a job queued without waking the worker
    // (Submit) is always seen by someone.
    {
      MutexLock lock(&mu_);
      if (helped >= kMaxHelped || queue_.empty() || !queue_.front()->job.small) {
        Release();
        if (!queue_.empty()) cv_.Signal();
        return;
      }
      next = std::move(queue_.front());
      queue_.pop_front();
    }
    waiting_.fetch_sub(1);
    job = &next->job;
    if (job->cancel != nullptr) job->cancel->ClearHook();
  }
}

bool DeviceExecutor::Held() {
  MutexLock lock(&hold_mu_);
  return held_;
}

void DeviceExecutor::DropQueued(uint64_t id) {
  std::unique_ptr<Queued> dropped;
  {
    MutexLock lock(&mu_);
    auto it = std::find_if(queue_.begin(), queue_.end(), [id](const auto& q) { return q->id == id; });
    if (it == queue_.end()) return;  // the worker took it already
    dropped = std::move(*it);
    queue_.erase(it);
  }
  waiting_.fetch_sub(1);
  dropped->job.done(dropped->job.cancel->reason());
}

absl::Status DeviceExecutor::RunSync(std::function<void()> run, std::shared_ptr<CancelToken> cancel, bool small) {
  std::promise<absl::Status> finished;
  std::future<absl::Status> result = finished.get_future();
  Submit(Job{std::move(run), [&finished](absl::Status s) { finished.set_value(std::move(s)); }, std::move(cancel),
             small});
  return result.get();
}

void DeviceExecutor::WorkerLoop(int omp_threads, const std::vector<int>& cpus) {
  if (omp_threads > 0) omp_set_num_threads(omp_threads);  // per-thread ICV: set on this thread
  if (absl::Status s = PinOpenMpTeam(cpus, omp_threads); !s.ok()) {
    std::fprintf(stderr, "npu-server: %s; compute threads left unpinned\n", std::string(s.message()).c_str());
  }
  for (;;) {
    std::unique_ptr<Queued> next;
    {
      MutexLock lock(&mu_);
      while (!stopping_.load() && queue_.empty()) cv_.Wait(&mu_);
      if (queue_.empty()) return;  // stopping and drained
      next = std::move(queue_.front());
      queue_.pop_front();
    }
    waiting_.fetch_sub(1);
    Job& job = next->job;
    if (job.cancel != nullptr) {
      job.cancel->ClearHook();  // from here on the token's hook cannot reach this job
      if (job.cancel->cancelled()) {
        job.done(job.cancel->reason());
        continue;
      }
    }
    Hold();
    RunHeld(job);
  }
}

}  // namespace npu::device
