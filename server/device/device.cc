#include "server/device/device.h"

#include "absl/strings/str_cat.h"

namespace npu::device {

Device::Device(int index, DevicePreset preset, const DeviceOptions& options)
    : id_(absl::StrCat("npu:", index)),
      preset_(std::move(preset)),
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

absl::Status Device::Execute(const std::function<void(DeviceSession&)>& job, const DeviceExecutor::GaveUp& gave_up,
                             bool small) {
  const uint64_t arrival = completed_horizon_.load();
  std::atomic<bool> cancel{false};
  return executor_.RunSync([&] {
    DeviceSession session{pool_, preset_, arrival, &cancel};
    job(session);
    completed_horizon_.store(pool_.horizon());
    runs_.fetch_add(1);
    std::lock_guard<std::mutex> lock(stats_mu_);
    stats_horizon_ = pool_.horizon();
    stats_busy_ = UnitCycles{};
    for (const auto& c : pool_.cores()) stats_busy_ += c.busy;
  }, gave_up, &cancel, small);
}

DeviceStatsSnapshot Device::Stats() const {
  DeviceStatsSnapshot s;
  s.runs = runs_.load();
  s.queue_depth = executor_.queue_depth();
  s.memory_used = memory_used_.load();
  s.cores = core_count_;
  std::lock_guard<std::mutex> lock(stats_mu_);
  s.timeline_cycles = stats_horizon_;
  s.busy = stats_busy_;
  return s;
}

}  // namespace npu::device
