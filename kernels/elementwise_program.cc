#include "kernels/elementwise_program.h"

#include <immintrin.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/cpu_features.h"
#include "kernels/fp16.h"
#include "kernels/vector_kernels.h"

namespace npu::kernels {

namespace {

// Lanes not below `limit` in magnitude, NaN included (an unordered compare).
__attribute__((target("avx512f"))) uint64_t CountNotBelowAvx512(const float* v, size_t n, float limit) {
  const __m512 lim = _mm512_set1_ps(limit);
  uint64_t count = 0;
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    count += __builtin_popcount(_mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_loadu_ps(v + i)), lim, _CMP_NLT_UQ));
  }
  const __mmask16 tail = static_cast<__mmask16>((1u << (n - i)) - 1);
  count += __builtin_popcount(
      _mm512_mask_cmp_ps_mask(tail, _mm512_abs_ps(_mm512_maskz_loadu_ps(tail, v + i)), lim, _CMP_NLT_UQ));
  return count;
}

__attribute__((target("avx2"))) uint64_t CountNotBelowAvx2(const float* v, size_t n, float limit) {
  const __m256 lim = _mm256_set1_ps(limit);
  const __m256 magnitude = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  uint64_t count = 0;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 a = _mm256_and_ps(_mm256_loadu_ps(v + i), magnitude);
    count += __builtin_popcount(_mm256_movemask_ps(_mm256_cmp_ps(a, lim, _CMP_NLT_UQ)));
  }
  for (; i < n; ++i) count += !(std::fabs(v[i]) < limit);
  return count;
}

}  // namespace

uint64_t CountOverflow(const float* v, size_t n, bool fp16) {
  // Run after every op that can overflow, on every result: vectorised.
  const float limit = fp16 ? 65520.0f : std::numeric_limits<float>::infinity();
  switch (ActiveVectorSimdPath()) {  // the Vector unit's path (tests force each)
    case SimdPath::kAvx512: return CountNotBelowAvx512(v, n, limit);
    case SimdPath::kAvx2: return CountNotBelowAvx2(v, n, limit);
    default: break;
  }
  uint64_t count = 0;
  for (size_t i = 0; i < n; ++i) count += !(std::fabs(v[i]) < limit);
  return count;
}

uint64_t RunEwProgram(const EwProgram& program, float* acc, size_t n, EwOperandChunks operands, bool saturate,
                      float* scratch) {
  const VectorKernelSet& k = VectorKernels();
  float* in = scratch + n;
  uint64_t overflow = 0;
  for (const EwStep& s : program.steps) {
    switch (s.kind) {
      case EwStep::Kind::kCaptureIn:
        std::memcpy(in, acc, n * sizeof(float));
        break;
      // The separate ops' own kernels, on fp32: what they compute before they
      // store. Their overflow counts are the kStore steps' to take.
      case EwStep::Kind::kUnary:
        k.unary(s.unary, s.params, F32Src(acc), F32Dst(acc), n, saturate);
        break;
      case EwStep::Kind::kBinary: {
        const float* other = s.operand == EwStep::kIn ? in : operands[s.operand];
        if (s.operand_first) {
          k.binary(s.binary, F32Src(other), F32Src(acc), F32Dst(acc), n, saturate);
        } else {
          k.binary(s.binary, F32Src(acc), F32Src(other), F32Dst(acc), n, saturate);
        }
        break;
      }
      case EwStep::Kind::kStore: {
        overflow += CountOverflow(acc, n, s.fp16);
        if (s.fp16) {  // the fp16 the separate op stored, as the next one read it back
          half_bits* h = reinterpret_cast<half_bits*>(scratch);
          k.narrow(acc, h, n, saturate);
          k.widen(h, acc, n);
        }
        break;
      }
    }
  }
  return overflow;
}

}  // namespace npu::kernels
