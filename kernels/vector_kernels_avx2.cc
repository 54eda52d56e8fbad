// The Vector kernels on AVX2 + FMA + F16C, 8 fp32 lanes (built with those flags
// and -ffp-contract=off; dispatched at run time).
#include <immintrin.h>

#include "kernels/vector_body_includes.h"

namespace npu::kernels {
namespace {

struct Isa {
  static constexpr int kLanes = 8;
  using Vec = __m256;
  using Int = __m256i;
  using Mask = __m256;  // all-ones lanes

  static Vec Zero() { return _mm256_setzero_ps(); }
  static Vec Set(float v) { return _mm256_set1_ps(v); }
  static Vec Load(const float* p) { return _mm256_loadu_ps(p); }
  static void Store(float* p, Vec v) { _mm256_storeu_ps(p, v); }
  static Vec LoadHalf(const half_bits* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static void StoreHalf(half_bits* p, Vec v) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }

  static Vec Add(Vec a, Vec b) { return _mm256_add_ps(a, b); }
  static Vec Sub(Vec a, Vec b) { return _mm256_sub_ps(a, b); }
  static Vec Mul(Vec a, Vec b) { return _mm256_mul_ps(a, b); }
  static Vec Div(Vec a, Vec b) { return _mm256_div_ps(a, b); }
  static Vec Fma(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
  static Vec Sqrt(Vec a) { return _mm256_sqrt_ps(a); }
  // a < b ? a : b and a > b ? a : b, exactly (minps/maxps: b when either is NaN).
  static Vec Min(Vec a, Vec b) { return _mm256_min_ps(a, b); }
  static Vec Max(Vec a, Vec b) { return _mm256_max_ps(a, b); }
  static Vec Abs(Vec a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
  static Vec Neg(Vec a) { return _mm256_xor_ps(a, _mm256_set1_ps(-0.0f)); }
  static Vec Round(Vec a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static Vec Trunc(Vec a) { return _mm256_round_ps(a, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC); }

  static Mask Lt(Vec a, Vec b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
  static Mask Le(Vec a, Vec b) { return _mm256_cmp_ps(a, b, _CMP_LE_OQ); }
  static Mask Gt(Vec a, Vec b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
  static Mask Ge(Vec a, Vec b) { return _mm256_cmp_ps(a, b, _CMP_GE_OQ); }
  static Mask Eq(Vec a, Vec b) { return _mm256_cmp_ps(a, b, _CMP_EQ_OQ); }
  static Mask Ne(Vec a, Vec b) { return _mm256_cmp_ps(a, b, _CMP_NEQ_UQ); }
  static Mask NotLt(Vec a, Vec b) { return _mm256_cmp_ps(a, b, _CMP_NLT_UQ); }  // !(a < b), NaN too
  static Mask IsNan(Vec a) { return _mm256_cmp_ps(a, a, _CMP_UNORD_Q); }
  static Mask And(Mask a, Mask b) { return _mm256_and_ps(a, b); }
  static Mask Or(Mask a, Mask b) { return _mm256_or_ps(a, b); }
  static Mask AndNot(Mask a, Mask b) { return _mm256_andnot_ps(a, b); }  // !a && b
  static bool Any(Mask m) { return _mm256_movemask_ps(m) != 0; }
  static uint32_t Lanes(Mask m) { return static_cast<uint32_t>(_mm256_movemask_ps(m)); }  // bit i: lane i
  static Vec Select(Mask m, Vec a, Vec b) { return _mm256_blendv_ps(b, a, m); }  // m ? a : b
  // The first n < kLanes floats at p (the other lanes 0), and their store: masked, so
  // nothing past them is touched.
  static __m256i FirstLanes(size_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static Vec LoadFirst(const float* p, size_t n) { return _mm256_maskload_ps(p, FirstLanes(n)); }
  static void StoreFirst(float* p, Vec v, size_t n) { _mm256_maskstore_ps(p, FirstLanes(n), v); }
  // The even and the odd elements of the 2 kLanes elements a, b (the shuffles
  // work per 128-bit half: a0 a2 b0 b2 | a4 a6 b4 b6, then the halves' 64-bit
  // pairs reordered).
  static void Deinterleave(Vec a, Vec b, Vec& even, Vec& odd) {
    const __m256 e = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
    const __m256 o = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
    even = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), _MM_SHUFFLE(3, 1, 2, 0)));
    odd = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(o), _MM_SHUFFLE(3, 1, 2, 0)));
  }

  static Int Bits(Vec a) { return _mm256_castps_si256(a); }
  static Vec FromBits(Int a) { return _mm256_castsi256_ps(a); }
  static Int ToInt(Vec a) { return _mm256_cvttps_epi32(a); }  // INT32_MIN when out of range or NaN
  static Vec ToFloat(Int a) { return _mm256_cvtepi32_ps(a); }
  static Int ISet(int32_t v) { return _mm256_set1_epi32(v); }
  static Int IAdd(Int a, Int b) { return _mm256_add_epi32(a, b); }
  static Int ISub(Int a, Int b) { return _mm256_sub_epi32(a, b); }
  static Int IAnd(Int a, Int b) { return _mm256_and_si256(a, b); }
  static Int IOr(Int a, Int b) { return _mm256_or_si256(a, b); }
  template <int k> static Int IShl(Int a) { return _mm256_slli_epi32(a, k); }
  template <int k> static Int ISra(Int a) { return _mm256_srai_epi32(a, k); }
  template <int k> static Int ISrl(Int a) { return _mm256_srli_epi32(a, k); }
  static Mask IEq(Int a, Int b) { return _mm256_castsi256_ps(_mm256_cmpeq_epi32(a, b)); }
  // count + (m ? 1 : 0) per lane (an all-ones lane is -1), and the lanes' sum.
  static Int CountIf(Int count, Mask m) { return _mm256_sub_epi32(count, _mm256_castps_si256(m)); }
  static uint64_t SumLanes(Int count) {
    alignas(32) uint32_t lanes[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), count);
    uint64_t sum = 0;
    for (uint32_t v : lanes) sum += v;
    return sum;
  }

  // half_lookup.h: AVX2's 16-bit compares.
  static uint64_t SaturateHalves(half_bits* p, size_t n, bool saturate) { return SaturateHalvesAvx2(p, n, saturate); }

  // Double precision: a Vec is two D::Vec of 4 lanes.
  struct D {
    static constexpr int kParts = 2;
    using Vec = __m256d;
    using Mask = __m256d;
    static Vec Part(Isa::Vec v, int part) {
      return _mm256_cvtps_pd(part == 0 ? _mm256_castps256_ps128(v) : _mm256_extractf128_ps(v, 1));
    }
    static Isa::Vec Join(const Vec (&p)[kParts]) {
      return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm256_cvtpd_ps(p[0])), _mm256_cvtpd_ps(p[1]), 1);
    }
    static Vec Set(double v) { return _mm256_set1_pd(v); }
    static Vec Load(const double* p) { return _mm256_loadu_pd(p); }
    static void Store(double* p, Vec v) { _mm256_storeu_pd(p, v); }
    static Vec Add(Vec a, Vec b) { return _mm256_add_pd(a, b); }
    static Vec Sub(Vec a, Vec b) { return _mm256_sub_pd(a, b); }
    static Vec Mul(Vec a, Vec b) { return _mm256_mul_pd(a, b); }
    static Vec Div(Vec a, Vec b) { return _mm256_div_pd(a, b); }
    static Vec Fma(Vec a, Vec b, Vec c) { return _mm256_fmadd_pd(a, b, c); }
    static Vec Min(Vec a, Vec b) { return _mm256_min_pd(a, b); }
    static Vec Max(Vec a, Vec b) { return _mm256_max_pd(a, b); }
    static Vec Round(Vec a) { return _mm256_round_pd(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
    static Vec Floor(Vec a) { return _mm256_round_pd(a, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); }
    static Mask Eq(Vec a, Vec b) { return _mm256_cmp_pd(a, b, _CMP_EQ_OQ); }
    static Mask Ge(Vec a, Vec b) { return _mm256_cmp_pd(a, b, _CMP_GE_OQ); }
    static Mask Or(Mask a, Mask b) { return _mm256_or_pd(a, b); }
    static Vec Select(Mask m, Vec a, Vec b) { return _mm256_blendv_pd(b, a, m); }
    static Vec Neg(Vec a) { return _mm256_xor_pd(a, _mm256_set1_pd(-0.0)); }
    // 2^n for integral n in [-1022, 1023]: the exponent field built from n's bits.
    static Vec Exp2Int(Vec n) {
      const __m256i bits = _mm256_castpd_si256(_mm256_add_pd(n, _mm256_set1_pd(0x1.8p52)));
      return _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_add_epi64(bits, _mm256_set1_epi64x(1023)), 52));
    }
  };
};

#include "kernels/vector_set_body.h"

}  // namespace

constexpr VectorKernelSet kAvx2VectorKernels = MakeVectorKernelSet(SimdPath::kAvx2);

}  // namespace npu::kernels
