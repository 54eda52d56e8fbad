// The ops' one parallel loop: body(i) for i in [0, n) over the device's OpenMP
// team. A parallel region costs a team allocation and a barrier even with one
// thread, so one item, or a run on a single thread (a small run on its caller's
// thread, see DeviceExecutor), loops directly. So does work of fewer than
// kernels::kParallelGrainElements elements (what the op reads and writes):
// kernels/parallel_grain.h says why.
//
// An exception may not leave an OpenMP region (the runtime would terminate the
// process), so the first one a body throws is caught inside, the remaining
// items are skipped, and it is rethrown after the region; the executor turns it
// into a status naming the node.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>

#include "kernels/openmp.h"
#include "kernels/parallel_grain.h"

namespace npu::graph::ops {

template <typename Body>
void ParallelFor(int64_t n, int64_t work_elements, Body&& body) {
  if (n <= 1 || omp_get_max_threads() == 1 ||
      !kernels::WorthAParallelRegion(static_cast<double>(work_elements), kernels::kParallelGrainElements)) {
    for (int64_t i = 0; i < n; ++i) body(i);
    return;
  }
  std::exception_ptr first;
  std::atomic<bool> failed{false};
  std::mutex mu;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    if (failed.load(std::memory_order_relaxed)) continue;
    try {
      body(i);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu);
      if (!first) first = std::current_exception();
      failed.store(true, std::memory_order_relaxed);
    }
  }
  if (first) std::rethrow_exception(first);
}

}  // namespace npu::graph::ops
