// fp16 rounding by its definition, in float64 (not by the converters under
// test): round to nearest even at fp16's precision (11 significant bits, steps
// of 2^-24 below the normal range), in either float mode. inf_nan: beyond
// 65504 (from 65520 up) +-inf, NaN stays NaN. Saturation (Ascend 910): those
// are +-65504, NaN is 0. And the name of a (SIMD path, float mode) test
// parameter, for the tests that run each packer in each mode.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>

#include "gtest/gtest.h"
#include "kernels/cpu_features.h"

namespace npu::kernels::testing {

inline float RoundToHalf(float f, bool saturate = false) {
  const double x = f;
  if (std::isnan(x)) return saturate ? 0.0f : f;
  if (x == 0.0) return f;
  double r = x;
  if (!std::isinf(x)) {
    const int e = std::max(std::ilogb(x), -14);
    const double step = std::ldexp(1.0, e - 10);
    r = std::nearbyint(x / step) * step;
  }
  if (std::fabs(r) > 65504.0) {
    return saturate ? static_cast<float>(std::copysign(65504.0, x))
                    : std::copysign(std::numeric_limits<float>::infinity(), f);
  }
  return static_cast<float>(r);
}

// "avx2_saturation", "portable_inf_nan", ...
inline std::string PathAndModeName(const ::testing::TestParamInfo<std::tuple<SimdPath, bool>>& info) {
  return std::string(SimdPathName(std::get<0>(info.param))) + (std::get<1>(info.param) ? "_saturation" : "_inf_nan");
}

inline auto EveryPathAndMode() {
  return ::testing::Combine(::testing::Values(SimdPath::kAvx512, SimdPath::kAvx2, SimdPath::kPortable),
                            ::testing::Bool());
}

}  // namespace npu::kernels::testing
