// ParallelFor's grain (kernels/parallel_grain.h): small work stays on the
// calling thread (no region: no barrier to wait at), enough work spreads over
// the team, and tests can ask for the team on small work too.
#include <atomic>
#include <set>

#include <gtest/gtest.h>

#include "kernels/openmp.h"
#include "kernels/parallel_grain.h"
#include "server/graph/ops/parallel_for.h"

namespace npu::graph::ops {
namespace {

// The OpenMP threads that ran 64 items of `work` elements on a team of two.
std::set<int> ThreadsThatRan(int64_t work) {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(2);
  std::atomic<int> seen[2] = {0, 0};
  std::atomic<int> in_parallel{0};
  ParallelFor(64, work, [&](int64_t) {
    seen[omp_get_thread_num() == 0 ? 0 : 1].store(1);
    if (omp_get_num_threads() > 1) in_parallel.store(1);
  });
  omp_set_num_threads(saved);
  std::set<int> threads;
  for (int t = 0; t < 2; ++t) {
    if (seen[t].load() != 0) threads.insert(t);
  }
  if (in_parallel.load() == 0) threads.insert(-1);  // marks: no parallel region
  return threads;
}

TEST(ParallelForTest, SmallWorkRunsOnTheCallingThread) {
  EXPECT_EQ(ThreadsThatRan(kernels::kParallelGrainElements - 1), (std::set<int>{-1, 0}));
}

TEST(ParallelForTest, EnoughWorkRunsOnTheTeam) {
#ifdef _OPENMP
  // A static schedule gives each of the two threads half the items.
  EXPECT_EQ(ThreadsThatRan(kernels::kParallelGrainElements), (std::set<int>{0, 1}));
  kernels::ScopedSmallWorkInParallel parallel;
  EXPECT_EQ(ThreadsThatRan(1), (std::set<int>{0, 1}));
#else
  GTEST_SKIP() << "built without OpenMP";
#endif
}

}  // namespace
}  // namespace npu::graph::ops
