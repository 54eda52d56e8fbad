// When work is worth a parallel region. Waking the team and waiting at its
// barrier costs microseconds on an idle host and a whole time slice whenever
// a thread of the team is descheduled on a busy one: more than a small op
// takes on one thread. So ops below a grain run on the calling thread (torch's
// at::parallel_for keeps a grain, 32768 elements, for the same reason). Every
// item computes the same bits on any thread, so this changes no result.
#pragma once

#include <atomic>
#include <cstdint>

namespace npu::kernels {

// Elements an op reads and writes (graph::ops::ParallelFor).
inline constexpr int64_t kParallelGrainElements = 65536;
// Multiply-adds of a Cube GEMM (CubeGemm).
inline constexpr int64_t kParallelGrainMacs = int64_t{1} << 18;

// Tests that compare thread counts on small shapes run them on the whole team.
inline std::atomic<bool> g_small_work_in_parallel{false};

inline bool WorthAParallelRegion(double work, int64_t grain) {
  return work >= static_cast<double>(grain) || g_small_work_in_parallel.load(std::memory_order_relaxed);
}

// For tests: small work runs in parallel while one of these lives.
class ScopedSmallWorkInParallel {
 public:
  ScopedSmallWorkInParallel() : saved_(g_small_work_in_parallel.exchange(true)) {}
  ~ScopedSmallWorkInParallel() { g_small_work_in_parallel.store(saved_); }
  ScopedSmallWorkInParallel(const ScopedSmallWorkInParallel&) = delete;
  ScopedSmallWorkInParallel& operator=(const ScopedSmallWorkInParallel&) = delete;

 private:
  bool saved_;
};

}  // namespace npu::kernels
