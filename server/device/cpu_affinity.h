// Pinning a device's compute threads to host CPUs (`npu-server
// --cpu-affinity`), the taskset-style launch people know from multi-card
// training. Chosen over OMP_PLACES / GOMP_CPU_AFFINITY because those are read
// once when OpenMP starts and apply to the whole process, while each device's
// worker owns its own OpenMP team and may get its own list.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace npu::device {

// "0-3,6,8-9" -> {0,1,2,3,6,8,9}; "" -> {} (no pinning). INVALID_ARGUMENT on
// malformed items, reversed ranges, CPUs >= CPU_SETSIZE or duplicates.
absl::StatusOr<std::vector<int>> ParseCpuList(absl::string_view list);

// INVALID_ARGUMENT naming the first CPU this process may not run on
// (sched_getaffinity), so a bad list fails at startup, not in a worker.
absl::Status CheckCpusAllowed(const std::vector<int>& cpus);

// Called on a device worker thread before its first parallel region: sets the
// team size (omp_threads, or one thread per listed CPU when omp_threads <= 0)
// and pins OpenMP thread i of the team to cpus[i % cpus.size()]. libgomp keeps
// a master's team threads for its later regions, so the pinning holds.
// INVALID_ARGUMENT when a thread could not be pinned.
absl::Status PinOpenMpTeam(const std::vector<int>& cpus, int omp_threads);

}  // namespace npu::device
