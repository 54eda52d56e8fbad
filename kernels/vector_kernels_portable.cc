// The Vector kernels in plain C++, one lane: for CPUs without AVX2/FMA/F16C and
// the reference the SIMD paths match bit for bit. Each operation is the scalar
// IEEE operation the SIMD instruction performs per lane (std::fma rounds once
// like vfmadd; min/max/convert keep the x86 rules), built with -ffp-contract=off.
#include "kernels/vector_body_includes.h"

namespace npu::kernels {
namespace {

struct Isa {
  static constexpr int kLanes = 1;
  using Vec = float;
  using Int = int32_t;
  using Mask = bool;

  static Vec Zero() { return 0.0f; }
  static Vec Set(float v) { return v; }
  static Vec Load(const float* p) { return *p; }
  static void Store(float* p, Vec v) { *p = v; }
  static Vec LoadHalf(const half_bits* p) { return HalfToFloat(*p); }
  static void StoreHalf(half_bits* p, Vec v) { *p = FloatToHalf(v); }

  static Vec Add(Vec a, Vec b) { return a + b; }
  static Vec Sub(Vec a, Vec b) { return a - b; }
  static Vec Mul(Vec a, Vec b) { return a * b; }
  static Vec Div(Vec a, Vec b) { return a / b; }
  static Vec Fma(Vec a, Vec b, Vec c) { return std::fma(a, b, c); }
  static Vec Sqrt(Vec a) { return std::sqrt(a); }
  static Vec Min(Vec a, Vec b) { return a < b ? a : b; }
  static Vec Max(Vec a, Vec b) { return a > b ? a : b; }
  static Vec Abs(Vec a) { return std::bit_cast<float>(std::bit_cast<uint32_t>(a) & 0x7fffffffu); }
  static Vec Neg(Vec a) { return std::bit_cast<float>(std::bit_cast<uint32_t>(a) ^ 0x80000000u); }
  static Vec Round(Vec a) { return std::nearbyint(a); }  // default mode: nearest even
  static Vec Trunc(Vec a) { return std::trunc(a); }

  static Mask Lt(Vec a, Vec b) { return a < b; }
  static Mask Le(Vec a, Vec b) { return a <= b; }
  static Mask Gt(Vec a, Vec b) { return a > b; }
  static Mask Ge(Vec a, Vec b) { return a >= b; }
  static Mask Eq(Vec a, Vec b) { return a == b; }
  static Mask Ne(Vec a, Vec b) { return !(a == b); }
  static Mask NotLt(Vec a, Vec b) { return !(a < b); }
  static Mask IsNan(Vec a) { return a != a; }
  static Mask And(Mask a, Mask b) { return a && b; }
  static Mask Or(Mask a, Mask b) { return a || b; }
  static Mask AndNot(Mask a, Mask b) { return !a && b; }
  static bool Any(Mask m) { return m; }
  static uint32_t Lanes(Mask m) { return m ? 1u : 0u; }
  static Vec Select(Mask m, Vec a, Vec b) { return m ? a : b; }
  static void Deinterleave(Vec a, Vec b, Vec& even, Vec& odd) { even = a, odd = b; }
  static Vec LoadFirst(const float* p, size_t n) { return n > 0 ? *p : 0.0f; }
  static void StoreFirst(float* p, Vec v, size_t n) {
    if (n > 0) *p = v;
  }

  static Int Bits(Vec a) { return std::bit_cast<int32_t>(a); }
  static Vec FromBits(Int a) { return std::bit_cast<float>(a); }
  // cvttps2dq: truncation, INT32_MIN for NaN and out-of-range values.
  static Int ToInt(Vec a) { return std::fabs(a) < 2147483648.0f ? static_cast<int32_t>(a) : INT32_MIN; }
  static Vec ToFloat(Int a) { return static_cast<float>(a); }
  static Int ISet(int32_t v) { return v; }
  // Wrapping, as the SIMD integer lanes wrap.
  static Int IAdd(Int a, Int b) { return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b)); }
  static Int ISub(Int a, Int b) { return static_cast<int32_t>(static_cast<uint32_t>(a) - static_cast<uint32_t>(b)); }
  static Int IAnd(Int a, Int b) { return a & b; }
  static Int IOr(Int a, Int b) { return a | b; }
  template <int k> static Int IShl(Int a) { return static_cast<int32_t>(static_cast<uint32_t>(a) << k); }
  template <int k> static Int ISra(Int a) { return a >> k; }
  template <int k> static Int ISrl(Int a) { return static_cast<int32_t>(static_cast<uint32_t>(a) >> k); }
  static Mask IEq(Int a, Int b) { return a == b; }
  static Int CountIf(Int count, Mask m) { return count + (m ? 1 : 0); }
  static uint64_t SumLanes(Int count) { return static_cast<uint32_t>(count); }

  static uint64_t SaturateHalves(half_bits* p, size_t n, bool saturate) {
    return SaturateHalvesScalar(p, n, saturate);
  }

  struct D {
    static constexpr int kParts = 1;
    using Vec = double;
    using Mask = bool;
    static Vec Part(Isa::Vec v, int) { return v; }
    static Isa::Vec Join(const Vec (&p)[kParts]) { return static_cast<float>(p[0]); }
    static Vec Set(double v) { return v; }
    static Vec Load(const double* p) { return *p; }
    static void Store(double* p, Vec v) { *p = v; }
    static Vec Add(Vec a, Vec b) { return a + b; }
    static Vec Sub(Vec a, Vec b) { return a - b; }
    static Vec Mul(Vec a, Vec b) { return a * b; }
    static Vec Div(Vec a, Vec b) { return a / b; }
    static Vec Fma(Vec a, Vec b, Vec c) { return std::fma(a, b, c); }
    static Vec Min(Vec a, Vec b) { return a < b ? a : b; }
    static Vec Max(Vec a, Vec b) { return a > b ? a : b; }
    static Vec Round(Vec a) { return std::nearbyint(a); }
    static Vec Floor(Vec a) { return std::floor(a); }
    static Mask Eq(Vec a, Vec b) { return a == b; }
    static Mask Ge(Vec a, Vec b) { return a >= b; }
    static Mask Or(Mask a, Mask b) { return a || b; }
    static Vec Select(Mask m, Vec a, Vec b) { return m ? a : b; }
    static Vec Neg(Vec a) { return std::bit_cast<double>(std::bit_cast<uint64_t>(a) ^ 0x8000000000000000ull); }
    static Vec Exp2Int(Vec n) {
      const uint64_t bits = std::bit_cast<uint64_t>(n + 0x1.8p52);
      return std::bit_cast<double>((bits + 1023) << 52);
    }
  };
};

#include "kernels/vector_set_body.h"

}  // namespace

constexpr VectorKernelSet kPortableVectorKernels = MakeVectorKernelSet(SimdPath::kPortable);

}  // namespace npu::kernels
