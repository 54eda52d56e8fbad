// The Cube's one rounding of an fp32 operand to fp16 (MTE1, on the way into
// L0A/L0B), in the run's float mode. Every packer (cube_pack.cc, cube_im2col.cc,
// cube_transposed_im2col.cc, constant B in cube_packed_b.cc) and every SIMD path
// rounds through these, so an operand holds the same bits whichever lays it out:
//   inf_nan     (saturate = false) IEEE: round to nearest even, from 65520 up
//               the value is +-inf, NaN stays NaN
//   saturation  (saturate = true, the Ascend 910) the same rounding, but what
//               would be +-inf is +-65504 and NaN is 0
// That is FloatToHalf / FloatToHalfSaturate (fp16.h), the rule the Vector
// unit's stores and FixPipe follow. The SIMD forms clip in fp32 before they
// round, which gives the same bits: a magnitude in (65504, 65520) rounds to
// 65504 either way, and +-inf clips to +-65504.
#pragma once

#include <immintrin.h>

#include <cstddef>

#include "kernels/fp16.h"

namespace npu::kernels {

inline half_bits CubeOperandHalf(float x, bool saturate) {
  return saturate ? FloatToHalfSaturate(x) : FloatToHalf(x);
}

// The fp32 value of x's fp16 operand (the A packers keep fp32 copies of halves).
inline float CubeOperand(float x, bool saturate) { return HalfToFloat(CubeOperandHalf(x, saturate)); }

// n contiguous operands to halves, on the Vector unit's conversion kernels.
inline void CubeOperandHalves(const float* in, half_bits* out, size_t n, bool saturate) {
  FloatToHalfN(in, out, n, saturate);
}

// 8 operands, as fp32 values of their halves.
__attribute__((target("avx2,f16c"), always_inline)) inline __m256 CubeOperand8(__m256 v, bool saturate) {
  if (saturate) {
    v = _mm256_and_ps(v, _mm256_cmp_ps(v, v, _CMP_ORD_Q));  // NaN -> +0
    v = _mm256_min_ps(_mm256_max_ps(v, _mm256_set1_ps(-kHalfMax)), _mm256_set1_ps(kHalfMax));
  }
  return _mm256_cvtph_ps(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

// 16 operands, as fp32 values of their halves.
__attribute__((target("avx512f"), always_inline)) inline __m512 CubeOperand16(__m512 v, bool saturate) {
  if (saturate) {
    v = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v, v, _CMP_ORD_Q), v);  // NaN -> +0
    v = _mm512_min_ps(_mm512_max_ps(v, _mm512_set1_ps(-kHalfMax)), _mm512_set1_ps(kHalfMax));
  }
  return _mm512_cvtph_ps(_mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

}  // namespace npu::kernels
