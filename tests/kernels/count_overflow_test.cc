// The float-status count of a store (kernels/elementwise_program.h,
// CountOverflow) against its definition, counted here one value at a time:
// NaN, +-inf and, for fp16, magnitudes from 65520 up (they round past 65504).
// Every length 0..80 from every alignment, so the SIMD bodies and tails are
// all reached, on every path this CPU can run.
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/cpu_features.h"
#include "kernels/elementwise_program.h"
#include "kernels/vector_kernels.h"

namespace npu::kernels {
namespace {

uint64_t Reference(const float* v, size_t n, bool fp16) {
  uint64_t count = 0;
  for (size_t i = 0; i < n; ++i) {
    const double x = v[i];
    if (std::isnan(x) || std::isinf(x) || (fp16 && std::fabs(x) >= 65520.0)) ++count;
  }
  return count;
}

TEST(CountOverflow, CountsNanInfAndFp16OverflowAtEveryLengthAndAlignment) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const float below = std::nextafter(65520.0f, 0.0f);
  const float specials[] = {nan, -nan, inf, -inf, 65520.0f, -65520.0f, below, -below, 65504.0f, 3.4e38f, -3.4e38f,
                            1e-45f, 0.0f, -0.0f};
  const int kinds = static_cast<int>(std::size(specials));
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> which(0, 2 * kinds);
  std::uniform_real_distribution<float> ordinary(-70000.0f, 70000.0f);
  std::vector<float> v(100);
  for (SimdPath path : {SimdPath::kAvx512, SimdPath::kAvx2, SimdPath::kPortable}) {
    if (!CpuCanRun(path)) continue;
    ForceVectorSimdPath(path);
    SCOPED_TRACE(SimdPathName(path));
    for (int round = 0; round < 20; ++round) {
      for (float& x : v) {
        const int w = which(rng);
        x = w < kinds ? specials[w] : ordinary(rng);
      }
      for (size_t start = 0; start < 16; ++start) {
        for (size_t n = 0; n + start <= 80; ++n) {
          for (bool fp16 : {false, true}) {
            ASSERT_EQ(CountOverflow(v.data() + start, n, fp16), Reference(v.data() + start, n, fp16))
                << "start " << start << " n " << n << (fp16 ? " fp16" : " fp32");
          }
        }
      }
    }
  }
  ForceVectorSimdPath(SimdPath::kAuto);
}

}  // namespace
}  // namespace npu::kernels
