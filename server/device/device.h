// One simulated NPU chip: its preset, memory accounting, core pool and the
// executor that runs jobs on it one at a time.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "server/device/core_pool.h"
#include "server/device/device_executor.h"
#include "server/device/device_preset.h"

namespace npu::device {

struct DeviceOptions {
  int omp_threads = 0;     // host threads for compute; 0 = OpenMP default
  size_t max_queue = 64;   // runs waiting beyond this are refused
  std::vector<int> cpu_affinity;  // pin the compute threads to these host CPUs (cpu_affinity.h); empty = no pinning
};

struct DeviceStatsSnapshot {
  uint64_t runs = 0;
  uint64_t queue_depth = 0;
  uint64_t timeline_cycles = 0;
  UnitCycles busy;  // summed over cores
  int cores = 0;
  uint64_t memory_used = 0;
};

// Handed to a job running on the device.
struct DeviceSession {
  CorePool& pool;
  const DevicePreset& preset;
  uint64_t arrival_cycle;  // modeled cycle the run arrived at (see Device::Execute)
  // Set once the run's caller gave up; jobs check it between nodes, kernels between tiles.
  const std::atomic<bool>* cancel = nullptr;
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

  // Runs `job` on the device's executor thread, which owns the core pool. A
  // run arrives at the modeled cycle where the runs finished before it was
  // submitted ended, so runs that overlap in real time queue in modeled time.
  // With `gave_up` (see DeviceExecutor::RunSync) a run whose caller gives up is
  // skipped while queued or told to stop through DeviceSession::cancel.
  // `small` lets a tiny run execute on the calling thread when the device is idle.
  absl::Status Execute(const std::function<void(DeviceSession&)>& job,
                       const DeviceExecutor::GaveUp& gave_up = nullptr, bool small = false);

  DeviceStatsSnapshot Stats() const;

 private:
  const std::string id_;
  const DevicePreset preset_;
  std::atomic<uint64_t> memory_used_{0};
  std::atomic<uint64_t> completed_horizon_{0};
  std::atomic<uint64_t> runs_{0};
  CorePool pool_;  // touched only on the executor thread
  const int core_count_;
  mutable std::mutex stats_mu_;  // guards the copies below, refreshed after each run
  uint64_t stats_horizon_ = 0;
  UnitCycles stats_busy_;
  DeviceExecutor executor_;  // last: its thread stops before the members above go
};

}  // namespace npu::device
