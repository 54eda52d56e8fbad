// The Vector kernels on AVX-512F + FMA + F16C, 16 fp32 lanes (built with those
// flags and -ffp-contract=off; dispatched at run time). Only AVX-512F
// instructions (no BW/DQ/VL, which not every AVX-512 CPU has).
#include <immintrin.h>

// GCC 12's _mm512_cvtph_ps and other intrinsics start from an undefined
// register (_mm512_undefined_*) and trip -W(maybe-)uninitialized when inlined;
// the value is fully overwritten.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

#include "kernels/vector_body_includes.h"

namespace npu::kernels {
namespace {

struct Isa {
  static constexpr int kLanes = 16;
  using Vec = __m512;
  using Int = __m512i;
  using Mask = __mmask16;

  static Vec Zero() { return _mm512_setzero_ps(); }
  static Vec Set(float v) { return _mm512_set1_ps(v); }
  static Vec Load(const float* p) { return _mm512_loadu_ps(p); }
  static void Store(float* p, Vec v) { _mm512_storeu_ps(p, v); }
  static Vec LoadHalf(const half_bits* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static void StoreHalf(half_bits* p, Vec v) {
    const __m256i h = _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), h);
  }

  static Vec Add(Vec a, Vec b) { return _mm512_add_ps(a, b); }
  static Vec Sub(Vec a, Vec b) { return _mm512_sub_ps(a, b); }
  static Vec Mul(Vec a, Vec b) { return _mm512_mul_ps(a, b); }
  static Vec Div(Vec a, Vec b) { return _mm512_div_ps(a, b); }
  static Vec Fma(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
  static Vec Sqrt(Vec a) { return _mm512_sqrt_ps(a); }
  // a < b ? a : b and a > b ? a : b, exactly (minps/maxps: b when either is NaN).
  static Vec Min(Vec a, Vec b) { return _mm512_min_ps(a, b); }
  static Vec Max(Vec a, Vec b) { return _mm512_max_ps(a, b); }
  static Vec Abs(Vec a) { return FromBits(_mm512_and_si512(Bits(a), _mm512_set1_epi32(0x7fffffff))); }
  static Vec Neg(Vec a) { return FromBits(_mm512_xor_si512(Bits(a), _mm512_set1_epi32(INT32_MIN))); }
  static Vec Round(Vec a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static Vec Trunc(Vec a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC); }

  static Mask Lt(Vec a, Vec b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
  static Mask Le(Vec a, Vec b) { return _mm512_cmp_ps_mask(a, b, _CMP_LE_OQ); }
  static Mask Gt(Vec a, Vec b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ); }
  static Mask Ge(Vec a, Vec b) { return _mm512_cmp_ps_mask(a, b, _CMP_GE_OQ); }
  static Mask Eq(Vec a, Vec b) { return _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ); }
  static Mask Ne(Vec a, Vec b) { return _mm512_cmp_ps_mask(a, b, _CMP_NEQ_UQ); }
  static Mask NotLt(Vec a, Vec b) { return _mm512_cmp_ps_mask(a, b, _CMP_NLT_UQ); }  // !(a < b), NaN too
  static Mask IsNan(Vec a) { return _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q); }
  static Mask And(Mask a, Mask b) { return a & b; }
  static Mask Or(Mask a, Mask b) { return a | b; }
  static Mask AndNot(Mask a, Mask b) { return static_cast<Mask>(~a & b); }  // !a && b
  static bool Any(Mask m) { return m != 0; }
  static uint32_t Lanes(Mask m) { return m; }  // bit i: lane i
  static Vec Select(Mask m, Vec a, Vec b) { return _mm512_mask_blend_ps(m, b, a); }  // m ? a : b
  // The first n < kLanes floats at p (the other lanes 0), and their store: masked, so
  // nothing past them is touched.
  static Mask First(size_t n) { return static_cast<Mask>((1u << n) - 1); }
  static Vec LoadFirst(const float* p, size_t n) { return _mm512_maskz_loadu_ps(First(n), p); }
  static void StoreFirst(float* p, Vec v, size_t n) { _mm512_mask_storeu_ps(p, First(n), v); }
  // The even and the odd elements of the 2 kLanes elements a, b.
  static void Deinterleave(Vec a, Vec b, Vec& even, Vec& odd) {
    const __m512i evens = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    even = _mm512_permutex2var_ps(a, evens, b);
    odd = _mm512_permutex2var_ps(a, _mm512_add_epi32(evens, _mm512_set1_epi32(1)), b);
  }

  static Int Bits(Vec a) { return _mm512_castps_si512(a); }
  static Vec FromBits(Int a) { return _mm512_castsi512_ps(a); }
  static Int ToInt(Vec a) { return _mm512_cvttps_epi32(a); }  // INT32_MIN when out of range or NaN
  static Vec ToFloat(Int a) { return _mm512_cvtepi32_ps(a); }
  static Int ISet(int32_t v) { return _mm512_set1_epi32(v); }
  static Int IAdd(Int a, Int b) { return _mm512_add_epi32(a, b); }
  static Int ISub(Int a, Int b) { return _mm512_sub_epi32(a, b); }
  static Int IAnd(Int a, Int b) { return _mm512_and_si512(a, b); }
  static Int IOr(Int a, Int b) { return _mm512_or_si512(a, b); }
  template <int k> static Int IShl(Int a) { return _mm512_slli_epi32(a, k); }
  template <int k> static Int ISra(Int a) { return _mm512_srai_epi32(a, k); }
  template <int k> static Int ISrl(Int a) { return _mm512_srli_epi32(a, k); }
  static Mask IEq(Int a, Int b) { return _mm512_cmpeq_epi32_mask(a, b); }
  // count + (m ? 1 : 0) per lane, and the lanes' sum.
  static Int CountIf(Int count, Mask m) { return _mm512_mask_add_epi32(count, m, count, _mm512_set1_epi32(1)); }
  static uint64_t SumLanes(Int count) { return static_cast<uint32_t>(_mm512_reduce_add_epi32(count)); }

  // half_lookup.h: AVX-512F has no 16-bit compares; AVX2's serve.
  static uint64_t SaturateHalves(half_bits* p, size_t n, bool saturate) { return SaturateHalvesAvx2(p, n, saturate); }

  // Double precision: a Vec is two D::Vec of 8 lanes.
  struct D {
    static constexpr int kParts = 2;
    using Vec = __m512d;
    using Mask = __mmask8;
    static Vec Part(Isa::Vec v, int part) {
      const __m256 half = part == 0 ? _mm512_castps512_ps256(v)
                                    : _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
      return _mm512_cvtps_pd(half);
    }
    static Isa::Vec Join(const Vec (&p)[kParts]) {
      const __m256 lo = _mm512_cvtpd_ps(p[0]), hi = _mm512_cvtpd_ps(p[1]);
      const __m512d both = _mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(lo)), _mm256_castps_pd(hi), 1);
      return _mm512_castpd_ps(both);
    }
    static Vec Set(double v) { return _mm512_set1_pd(v); }
    static Vec Load(const double* p) { return _mm512_loadu_pd(p); }
    static void Store(double* p, Vec v) { _mm512_storeu_pd(p, v); }
    static Vec Add(Vec a, Vec b) { return _mm512_add_pd(a, b); }
    static Vec Sub(Vec a, Vec b) { return _mm512_sub_pd(a, b); }
    static Vec Mul(Vec a, Vec b) { return _mm512_mul_pd(a, b); }
    static Vec Div(Vec a, Vec b) { return _mm512_div_pd(a, b); }
    static Vec Fma(Vec a, Vec b, Vec c) { return _mm512_fmadd_pd(a, b, c); }
    static Vec Min(Vec a, Vec b) { return _mm512_min_pd(a, b); }
    static Vec Max(Vec a, Vec b) { return _mm512_max_pd(a, b); }
    static Vec Round(Vec a) { return _mm512_roundscale_pd(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
    static Vec Floor(Vec a) { return _mm512_roundscale_pd(a, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); }
    static Mask Eq(Vec a, Vec b) { return _mm512_cmp_pd_mask(a, b, _CMP_EQ_OQ); }
    static Mask Ge(Vec a, Vec b) { return _mm512_cmp_pd_mask(a, b, _CMP_GE_OQ); }
    static Mask Or(Mask a, Mask b) { return a | b; }
    static Vec Select(Mask m, Vec a, Vec b) { return _mm512_mask_blend_pd(m, b, a); }
    static Vec Neg(Vec a) {
      return _mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512(a), _mm512_set1_epi64(INT64_MIN)));
    }
    // 2^n for integral n in [-1022, 1023]: the exponent field built from n's bits.
    static Vec Exp2Int(Vec n) {
      const __m512i bits = _mm512_castpd_si512(_mm512_add_pd(n, _mm512_set1_pd(0x1.8p52)));
      return _mm512_castsi512_pd(_mm512_slli_epi64(_mm512_add_epi64(bits, _mm512_set1_epi64(1023)), 52));
    }
  };
};

#include "kernels/vector_set_body.h"

}  // namespace

constexpr VectorKernelSet kAvx512VectorKernels = MakeVectorKernelSet(SimdPath::kAvx512);

}  // namespace npu::kernels
