// Helpers of the Vector kernel tests: ulp errors against long double references,
// the dense fp32 input sweep, the SIMD paths this CPU can run.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <vector>

#include "kernels/cpu_features.h"
#include "kernels/fp16.h"

namespace npu::kernels {

// |got - ref| in ulp of ref at fp32 (subnormal ulp below 2^-126); infinity when
// one is NaN/inf and the other is not what the reference rounds to.
inline double UlpErrorF32(float got, long double ref) {
  constexpr double kMismatch = std::numeric_limits<double>::infinity();
  if (std::isnan(ref) || std::isnan(got)) return std::isnan(ref) && std::isnan(got) ? 0 : kMismatch;
  const float rounded = static_cast<float>(ref);
  if (std::isinf(rounded) || std::isinf(got)) return got == rounded ? 0 : kMismatch;
  const int e = std::fabs(ref) < 0x1p-126L ? -126 : std::ilogb(ref);
  return static_cast<double>(std::fabs(static_cast<long double>(got) - ref) / std::ldexp(1.0L, e - 23));
}

// The same for an fp16 result (ulp 2^(e-10), subnormal below 2^-14; >= 65520 is inf).
inline double UlpErrorF16(half_bits got, long double ref) {
  constexpr double kMismatch = std::numeric_limits<double>::infinity();
  const float g = HalfToFloat(got);
  if (std::isnan(ref) || std::isnan(g)) return std::isnan(ref) && std::isnan(g) ? 0 : kMismatch;
  const bool ref_inf = std::fabs(ref) >= 65520.0L;
  if (ref_inf || std::isinf(g)) return ref_inf && std::isinf(g) && std::signbit(g) == std::signbit(ref) ? 0 : kMismatch;
  const int e = std::fabs(ref) < 0x1p-14L ? -14 : std::ilogb(ref);
  return static_cast<double>(std::fabs(static_cast<long double>(g) - ref) / std::ldexp(1.0L, e - 10));
}

// Every 8209th fp32 bit pattern of each sign (NaNs left out, +-inf and one NaN
// put in), plus 64 neighbours each way of the points where a kernel changes
// formula or range: ~0.53M inputs, a second or two in CI (under ASan too).
// NPU_VECTOR_MATH_STRIDE=61 makes it denser for an offline run
// (scripts/vector_math_sweep.sh; docs/ops.md quotes it).
inline std::vector<float> DenseFp32Sweep() {
  const char* env = std::getenv("NPU_VECTOR_MATH_STRIDE");
  const uint64_t stride = env != nullptr && std::atoll(env) > 0 ? static_cast<uint64_t>(std::atoll(env)) : 8209;
  std::vector<float> xs;
  for (uint64_t u = 0; u < 0x7f800000u; u += stride) {
    xs.push_back(std::bit_cast<float>(static_cast<uint32_t>(u)));
    xs.push_back(std::bit_cast<float>(static_cast<uint32_t>(u) | 0x80000000u));
  }
  for (float edge : {0.625f, 1.0f, 0x1p18f, 88.7228f, -103.97f, 0x1p-126f, 65504.0f, 65520.0f, 0.5f, 2.0f}) {
    for (float s : {1.0f, -1.0f}) {
      float v = edge * s;
      for (int i = 0; i < 64; ++i) v = std::nextafter(v, 0.0f);
      for (int i = 0; i < 128; ++i, v = std::nextafter(v, s * INFINITY)) xs.push_back(v);
    }
  }
  for (float v : {INFINITY, -INFINITY, NAN, 0.0f, -0.0f}) xs.push_back(v);
  return xs;
}

inline std::vector<SimdPath> RunnablePaths() {
  std::vector<SimdPath> paths;
  for (SimdPath p : {SimdPath::kAvx512, SimdPath::kAvx2, SimdPath::kPortable}) {
    if (CpuCanRun(p)) paths.push_back(p);
  }
  return paths;
}

// Bit patterns with every NaN made the same (payloads are not part of the contract).
inline std::vector<uint32_t> CanonicalBits(const std::vector<float>& v) {
  std::vector<uint32_t> bits(v.size());
  for (size_t i = 0; i < v.size(); ++i) bits[i] = std::isnan(v[i]) ? 0x7fc00000u : std::bit_cast<uint32_t>(v[i]);
  return bits;
}

}  // namespace npu::kernels
