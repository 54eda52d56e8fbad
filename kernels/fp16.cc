#include "kernels/fp16.h"

#include <bit>
#include <cmath>

#include "kernels/vector_kernels.h"

namespace npu::kernels {

float HalfToFloat(half_bits h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  const uint32_t mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);  // inf or NaN, payload kept
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);  // rebias 15 -> 127
  } else if (mant == 0) {
    bits = sign;
  } else {
    // Subnormal half = mant * 2^-24; exact in fp32.
    const float v = static_cast<float>(mant) * 0x1p-24f;
    bits = sign | std::bit_cast<uint32_t>(v);
  }
  return std::bit_cast<float>(bits);
}

half_bits FloatToHalf(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or NaN
    if (abs == 0x7f800000u) return sign | 0x7c00;
    return sign | 0x7e00 | static_cast<uint16_t>((abs >> 13) & 0x3ff);
  }
  if (abs >= 0x477ff000u) return sign | 0x7c00;  // rounds to >= 65520: overflow
  if (abs >= 0x38800000u) {                      // normal half range (>= 2^-14)
    const uint32_t mant = abs & 0x7fffff;
    const uint32_t exp = (abs >> 23) - 112;
    uint32_t h = (exp << 10) | (mant >> 13);
    const uint32_t rest = mant & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) ++h;  // carry may bump the exponent: correct
    return sign | static_cast<uint16_t>(h);
  }
  // Subnormal or zero: value / 2^-24 rounded to nearest even integer.
  const float scaled = std::bit_cast<float>(abs) * 0x1p24f;  // exact (power-of-two scale)
  const uint32_t q = static_cast<uint32_t>(std::nearbyint(scaled));  // default mode: ties to even
  return sign | static_cast<uint16_t>(q);  // q == 0x400 becomes the smallest normal: correct
}

half_bits FloatToHalfSaturate(float f) {
  if (std::isnan(f)) return 0;
  half_bits h = FloatToHalf(f);
  if ((h & 0x7fff) == 0x7c00) h = (h & 0x8000) | kHalfMaxBits;
  return h;
}

void HalfToFloatN(const half_bits* in, float* out, size_t n) { VectorKernels().widen(in, out, n); }

void FloatToHalfN(const float* in, half_bits* out, size_t n, bool saturate) {
  VectorKernels().narrow(in, out, n, saturate);
}

uint64_t CountHalfOverflow(const float* in, size_t n) {
  uint64_t count = 0;
  for (size_t i = 0; i < n; ++i) {
    // 0x477ff000 = 65520: the first magnitude that rounds past 65504 (FloatToHalf);
    // inf and NaN bit patterns are above it.
    count += (std::bit_cast<uint32_t>(in[i]) & 0x7fffffffu) >= 0x477ff000u;
  }
  return count;
}

uint64_t CountNonFinite(const float* in, size_t n) {
  uint64_t count = 0;
  for (size_t i = 0; i < n; ++i) count += (std::bit_cast<uint32_t>(in[i]) & 0x7fffffffu) >= 0x7f800000u;
  return count;
}

}  // namespace npu::kernels
