#include "server/device/device.h"

#include <chrono>
#include <future>

#include "absl/strings/str_cat.h"

namespace npu::device {
namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Device::Device(int index, DevicePreset preset, const DeviceOptions& options)
    : id_(absl::StrCat("npu:", index)),
      preset_(std::move(preset)),
      arena_keep_bytes_(options.arena_keep_bytes),
      pool_(preset_),
      core_count_(static_cast<int>(pool_.cores().size())),
      executor_(options.max_queue, options.omp_threads, options.cpu_affinity) {}

absl::Status Device::ReserveMemory(uint64_t bytes) {
  uint64_t used = memory_used_.load();
  do {
    if (bytes > preset_.hbm_bytes || used > preset_.hbm_bytes - bytes) {
      return absl::ResourceExhaustedError(absl::StrCat("device ", id_, " memory: ", bytes,
                                                       " bytes requested, ", preset_.hbm_bytes - used,
                                                       " of ", preset_.hbm_bytes, " free"));
    }
  } while (!memory_used_.compare_exchange_weak(used, used + bytes));
  return absl::OkStatus();
}

void Device::ReleaseMemory(uint64_t bytes) { memory_used_.fetch_sub(bytes); }

void Device::Submit(Job job, std::shared_ptr<CancelToken> cancel, bool small,
                    std::function<void(absl::Status)> done) {
  if (cancel == nullptr) cancel = std::make_shared<CancelToken>();  // jobs always have a flag to read
  const uint64_t arrival = pool_.clock().Submit();
  const std::atomic<bool>* flag = cancel->flag();
  // Whether the run started: one dropped while queued stops waiting when it is done.
  auto started = std::make_shared<std::atomic<bool>>(false);
  auto run = [this, job = std::move(job), arrival, flag, started] {
    started->store(true);
    OpenRun(arrival);
    DeviceSession session{pool_, preset_, arrival, flag, &arena_};
    // Whatever the job does, the device's books are closed before it is released.
    struct CloseBooks {
      Device* d;
      ~CloseBooks() { d->CloseRun(); }
    } close{this};
    job(session);
  };
  auto finished = [this, arrival, started, done = std::move(done)](absl::Status s) {
    if (!started->load()) pool_.clock().Drop(arrival);
    done(std::move(s));
  };
  executor_.Submit(DeviceExecutor::Job{std::move(run), std::move(finished), std::move(cancel), small});
}

void Device::OpenRun(uint64_t arrival) {
  pool_.clock().Start(arrival);
  pool_.BeginRun();
}

void Device::CloseRun() {
  arena_.Trim(arena_keep_bytes_);
  arena_bytes_.store(arena_.capacity());
  last_run_end_ns_.store(NowNs());
  pool_.clock().Finish(pool_.horizon());
  runs_.fetch_add(1);
  MutexLock lock(&stats_mu_);
  stats_horizon_ = pool_.horizon();
  stats_busy_ = UnitCycles{};
  for (const auto& c : pool_.cores()) stats_busy_ += c.busy;
}

absl::Status Device::Execute(const Job& job, std::shared_ptr<CancelToken> cancel, bool small) {
  std::promise<absl::Status> finished;
  std::future<absl::Status> result = finished.get_future();
  Submit(job, std::move(cancel), small, [&finished](absl::Status s) { finished.set_value(std::move(s)); });
  return result.get();
}

bool Device::ReleaseIdleArena(std::chrono::nanoseconds idle, uint64_t keep_bytes) {
  if (arena_bytes_.load() <= keep_bytes || NowNs() - last_run_end_ns_.load() < idle.count()) return false;
  bool freed = false;
  // A job of its own (not a run: no clock, no count), so the arena is touched
  // only by whoever holds the device.
  const absl::Status ran = executor_.RunSync(
      [&] {
        if (NowNs() - last_run_end_ns_.load() < idle.count()) return;  // a run came in between
        arena_.Trim(keep_bytes);
        freed = arena_.capacity() <= keep_bytes;
        arena_bytes_.store(arena_.capacity());
      },
      nullptr, /*small=*/true);
  return ran.ok() && freed;  // a device that is stopping runs no job: nothing was freed
}

DeviceStatsSnapshot Device::Stats() const {
  DeviceStatsSnapshot s;
  s.runs = runs_.load();
  s.queue_depth = executor_.queue_depth();
  s.memory_used = memory_used_.load();
  s.cores = core_count_;
  s.held_for = executor_.held_for();
  MutexLock lock(&stats_mu_);
  s.timeline_cycles = stats_horizon_;
  s.busy = stats_busy_;
  return s;
}

}  // namespace npu::device
