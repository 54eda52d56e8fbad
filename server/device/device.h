// One simulated NPU chip: its preset, memory accounting, core pool and the
// executor that runs jobs on it one at a time.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "base/mutex.h"
#include "server/device/core_pool.h"
#include "server/device/device_executor.h"
#include "server/device/device_preset.h"
#include "server/device/run_arena.h"

namespace npu::device {

struct DeviceOptions {
  int omp_threads = 0;     // host threads for compute; 0 = OpenMP default
  size_t max_queue = 64;   // runs waiting beyond this are refused
  uint64_t arena_keep_bytes = uint64_t{256} << 20;  // a run arena above this is freed after its run
  std::vector<int> cpu_affinity;  // pin the compute threads to these host CPUs (cpu_affinity.h); empty = no pinning
};

struct DeviceStatsSnapshot {
  uint64_t runs = 0;
  uint64_t queue_depth = 0;
  uint64_t timeline_cycles = 0;
  UnitCycles busy;  // summed over cores
  int cores = 0;
  uint64_t memory_used = 0;
  std::chrono::nanoseconds held_for{0};  // how long the running job has held the device; 0 when idle
};

// Handed to a job running on the device.
struct DeviceSession {
  CorePool& pool;
  const DevicePreset& preset;
  uint64_t arrival_cycle;  // modeled cycle the run arrived at (see Device::Execute)
  // Set once the run's caller gave up; jobs check it between nodes, kernels between tiles.
  const std::atomic<bool>* cancel = nullptr;
  RunArena* arena = nullptr;  // the device's block for a run's intermediates (run_arena.h)
};

class Device {
 public:
  Device(int index, DevicePreset preset, const DeviceOptions& options);

  const std::string& id() const { return id_; }
  const DevicePreset& preset() const { return preset_; }

  // Simulated device memory (HBM) accounting.
  absl::Status ReserveMemory(uint64_t bytes);
  void ReleaseMemory(uint64_t bytes);
  uint64_t memory_used() const { return memory_used_.load(); }

  // Runs `job` on the device (DeviceExecutor::Submit: small jobs may run on
  // the calling thread) and calls `done` once, after the device is released.
  // The run arrives at the device's modeled clock at the moment it is
  // submitted (modeled_clock.h): where the run executing then has got, or,
  // when none is, where the runs before it ended. Runs execute one at a time
  // on the host, but in modeled time a run submitted while another executes
  // overlaps it: its ops take the cores, bandwidth and issue slots the other
  // left, and wait (NodeProfile.wait_cycles) where it holds them.
  // `cancel` (optional) drops the job while it is queued and is the flag the
  // job sees in DeviceSession::cancel while it runs.
  using Job = std::function<void(DeviceSession&)>;
  void Submit(Job job, std::shared_ptr<CancelToken> cancel, bool small, std::function<void(absl::Status)> done);
  // Submit and wait.
  absl::Status Execute(const Job& job, std::shared_ptr<CancelToken> cancel = nullptr, bool small = false);

  DeviceStatsSnapshot Stats() const;

  // Frees the run arena when it is larger than `keep_bytes` and no run has
  // ended for `idle`: a burst of large runs does not keep its memory once it
  // is over, while a steady stream of them keeps reusing touched pages. Takes
  // the device as a job does (so never under a run); called by the server's
  // memory returner. True when it freed the block.
  bool ReleaseIdleArena(std::chrono::nanoseconds idle, uint64_t keep_bytes);

 private:
  void OpenRun(uint64_t arrival);  // before each job, holding the device
  void CloseRun();                 // after each job, still holding the device

  const std::string id_;
  const DevicePreset preset_;
  std::atomic<uint64_t> memory_used_{0};
  std::atomic<uint64_t> runs_{0};
  const uint64_t arena_keep_bytes_;
  // Copies of the arena's size and of when the last run ended, for
  // ReleaseIdleArena's look from another thread (the arena is the holder's).
  std::atomic<uint64_t> arena_bytes_{0};
  std::atomic<int64_t> last_run_end_ns_{0};
  CorePool pool_;   // touched only by the job holding the device
  RunArena arena_;  // likewise
  const int core_count_;
  mutable Mutex stats_mu_;  // copies for Stats(), refreshed after each run
  uint64_t stats_horizon_ ABSL_GUARDED_BY(stats_mu_) = 0;
  UnitCycles stats_busy_ ABSL_GUARDED_BY(stats_mu_);
  DeviceExecutor executor_;  // last: its thread stops before the members above go
};

}  // namespace npu::device
