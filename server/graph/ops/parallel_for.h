// The ops' one parallel loop: body(i) for i in [0, n) over the device's OpenMP
// team. A parallel region costs a team allocation and a barrier even with one
// thread, so one item, or a run on a single thread (a small run on its caller's
// thread, see DeviceExecutor), loops directly.
#pragma once

#include <cstdint>

#include "kernels/openmp.h"

namespace npu::graph::ops {

template <typename Body>
void ParallelFor(int64_t n, Body&& body) {
  if (n <= 1 || omp_get_max_threads() == 1) {
    for (int64_t i = 0; i < n; ++i) body(i);
    return;
  }
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) body(i);
}

}  // namespace npu::graph::ops
