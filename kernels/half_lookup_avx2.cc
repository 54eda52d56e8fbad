// SaturateHalvesAvx2 (half_lookup.h), built with -mavx2.
#include <immintrin.h>

#include <bit>

#include "kernels/half_lookup.h"

namespace npu::kernels {

uint64_t SaturateHalvesAvx2(half_bits* p, size_t n, bool saturate) {
  const __m256i exp = _mm256_set1_epi16(0x7c00);
  uint64_t over = 0;
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i));
    const __m256i nonfinite = _mm256_cmpeq_epi16(_mm256_and_si256(h, exp), exp);
    const uint32_t bits = static_cast<uint32_t>(_mm256_movemask_epi8(nonfinite));
    if (bits == 0) continue;
    over += static_cast<uint64_t>(std::popcount(bits)) / 2;  // two mask bits per half
    if (!saturate) continue;
    const __m256i sat = _mm256_or_si256(_mm256_and_si256(h, _mm256_set1_epi16(INT16_MIN)), _mm256_set1_epi16(static_cast<int16_t>(kHalfMaxBits)));
    const __m256i nan = _mm256_cmpgt_epi16(_mm256_and_si256(h, _mm256_set1_epi16(0x7fff)), exp);
    h = _mm256_andnot_si256(nan, _mm256_blendv_epi8(h, sat, nonfinite));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p + i), h);
  }
  return over + SaturateHalvesScalar(p + i, n - i, saturate);
}

}  // namespace npu::kernels
