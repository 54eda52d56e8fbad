// The Vector unit's math against long double references (glibc's expl, erfl,
// sinl, ... carry 64 mantissa bits: well beyond fp32), measured in ulp of the
// result: over all 65,536 fp16 inputs (fp16 in, fp16 out) and over a dense
// fp32 sweep (every 8209th bit pattern of each sign, ~0.53M inputs, plus the
// neighbourhoods where a function changes formula). The bounds asserted here are
// the table in docs/ops.md ("Vector math accuracy"). Every SIMD path the CPU
// has must give the same bits (NaN payloads aside) on the same inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "kernels/fp16.h"
#include "kernels/vector_kernels.h"
#include "tests/kernels/vector_test_support.h"

namespace npu::kernels {
namespace {

using LD = long double;

struct Function {
  const char* name;
  UnaryOp op;
  std::function<LD(LD)> ref;
  // Asserted bounds, in ulp of the exact result: the maximum a denser sweep
  // (scripts/vector_math_sweep.sh: every 61st pattern, 70M inputs) found,
  // rounded up; docs/ops.md.
  double fp32_max_ulp;
  double fp16_max_ulp;
};

// x f(x) for activations whose limit at -inf is -0 (the formula gives -inf * 0).
LD Gelu(LD x) { return std::isinf(x) && x < 0 ? -0.0L : x * std::erfc(-x / std::sqrt(2.0L)) / 2; }
LD Silu(LD x) { return std::isinf(x) && x < 0 ? -0.0L : x / (1 + std::exp(-x)); }
LD GeluTanh(LD x) {
  if (std::isinf(x) && x < 0) return -0.0L;
  const LD u = std::sqrt(2.0L / 3.14159265358979323846264338327950288L) * (x + 0.044715L * x * x * x);
  return x / (1 + std::exp(-2 * u));
}

const std::vector<Function>& Functions() {
  static const auto* f = new std::vector<Function>{
      {"exp", UnaryOp::kExp, [](LD x) { return std::exp(x); }, 1.05, 0.51},
      {"log", UnaryOp::kLog, [](LD x) { return std::log(x); }, 0.51, 0.51},
      {"erf", UnaryOp::kErf, [](LD x) { return std::erf(x); }, 1.35, 0.51},
      {"sigmoid", UnaryOp::kSigmoid, [](LD x) { return 1 / (1 + std::exp(-x)); }, 2.05, 0.51},
      {"tanh", UnaryOp::kTanh, [](LD x) { return std::tanh(x); }, 1.35, 0.51},
      {"silu", UnaryOp::kSilu, Silu, 2.35, 0.51},
      {"gelu", UnaryOp::kGeluErf, Gelu, 3.8, 0.51},
      {"gelu_tanh", UnaryOp::kGeluTanh, GeluTanh, 2.5, 0.51},
      {"sin", UnaryOp::kSin, [](LD x) { return std::sin(x); }, 0.51, 0.51},
      {"cos", UnaryOp::kCos, [](LD x) { return std::cos(x); }, 0.51, 0.51},
      {"sqrt", UnaryOp::kSqrt, [](LD x) { return std::sqrt(x); }, 0.5, 0.5},
      {"reciprocal", UnaryOp::kReciprocal, [](LD x) { return 1 / x; }, 0.5, 0.5},
  };
  return *f;
}

struct Measured {
  double max_ulp = 0;
  float worst_input = 0;
  int mismatched_specials = 0;  // NaN/inf where the reference has none, or the reverse
};

void Account(Measured& m, float input, double ulps) {
  if (ulps > m.max_ulp) m.max_ulp = ulps, m.worst_input = input;
}

Measured MeasureFp32(const Function& f, const std::vector<float>& xs) {
  std::vector<float> ys(xs.size());
  VectorKernels().unary(f.op, {}, F32Src(xs.data()), F32Dst(ys.data()), xs.size(), false);
  Measured m;
  for (size_t i = 0; i < xs.size(); ++i) {
    const double e = UlpErrorF32(ys[i], f.ref(xs[i]));
    if (std::isinf(e)) {
      ++m.mismatched_specials;
      if (m.mismatched_specials <= 3)
        ADD_FAILURE() << f.name << "(" << xs[i] << ") = " << ys[i] << ", reference "
                      << static_cast<double>(f.ref(xs[i]));
      continue;
    }
    Account(m, xs[i], e);
  }
  return m;
}

Measured MeasureFp16(const Function& f) {
  std::vector<half_bits> xs(65536), ys(65536);
  for (uint32_t h = 0; h < 65536; ++h) xs[h] = static_cast<half_bits>(h);
  VectorKernels().unary(f.op, {}, F16Src(xs.data()), F16Dst(ys.data()), xs.size(), false);
  Measured m;
  for (uint32_t h = 0; h < 65536; ++h) {
    const float x = HalfToFloat(xs[h]);
    const double e = UlpErrorF16(ys[h], f.ref(x));
    if (std::isinf(e)) {
      ++m.mismatched_specials;
      if (m.mismatched_specials <= 3) ADD_FAILURE() << f.name << "(fp16 " << x << ") = " << HalfToFloat(ys[h]);
      continue;
    }
    Account(m, x, e);
  }
  return m;
}

TEST(VectorMath, AccuracyOverTheWholeFp16Range) {
  for (const Function& f : Functions()) {
    const Measured m = MeasureFp16(f);
    std::printf("%-11s fp16: max %.3f ulp (at %g)\n", f.name, m.max_ulp, m.worst_input);
    EXPECT_LE(m.max_ulp, f.fp16_max_ulp) << f.name << " at " << m.worst_input;
    EXPECT_EQ(m.mismatched_specials, 0) << f.name;
  }
}

TEST(VectorMath, AccuracyOverADenseFp32Sweep) {
  const std::vector<float> xs = DenseFp32Sweep();
  for (const Function& f : Functions()) {
    const Measured m = MeasureFp32(f, xs);
    std::printf("%-11s fp32: max %.3f ulp (at %a) over %zu inputs\n", f.name, m.max_ulp, m.worst_input, xs.size());
    EXPECT_LE(m.max_ulp, f.fp32_max_ulp) << f.name << " at " << m.worst_input;
    EXPECT_EQ(m.mismatched_specials, 0) << f.name;
  }
}

TEST(VectorMath, PowAgainstLongDoubleOnAGrid) {
  // Bases over many binades (both signs, subnormals), exponents around the
  // integers and far out; the special cases are checked one by one below.
  std::vector<float> bases, exps;
  for (float b = 1e-40f; b < 1e38f; b *= 1.618f) bases.push_back(b), bases.push_back(-b);
  for (float b = 0.5f; b < 2.0f; b += 1.0f / 64) bases.push_back(b);
  for (float e = -40; e <= 40; e += 0.3125f) exps.push_back(e);
  for (float e : {0.5f, -0.5f, 1.0f / 3, 2.0f, 3.0f, -1.0f, 100.5f, -150.0f, 1e-6f}) exps.push_back(e);
  std::vector<float> a, b;
  for (float x : bases) {
    for (float y : exps) a.push_back(x), b.push_back(y);
  }
  std::vector<float> got(a.size());
  VectorKernels().binary(BinaryOp::kPow, F32Src(a.data()), F32Src(b.data()), F32Dst(got.data()), a.size(), false);
  double worst = 0;
  int mismatched = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double e = UlpErrorF32(got[i], std::pow(static_cast<LD>(a[i]), static_cast<LD>(b[i])));
    if (std::isinf(e)) {
      if (++mismatched <= 3) ADD_FAILURE() << "pow(" << a[i] << ", " << b[i] << ") = " << got[i];
      continue;
    }
    worst = std::max(worst, e);
  }
  std::printf("pow        fp32: max %.3f ulp over %zu (x, y) pairs\n", worst, a.size());
  EXPECT_LE(worst, 0.51);
  EXPECT_EQ(mismatched, 0);
}

TEST(VectorMath, PowSpecialCasesFollowC) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> values = {0.0f, -0.0f, 1.0f, -1.0f, 2.0f, -2.0f,  0.5f,    -0.5f, 3.0f,  -3.0f,
                                     2.5f, -2.5f, inf,  -inf,  nan,  1e-45f, -1e-45f, 1e30f, -1e30f};
  std::vector<float> a, b;
  for (float x : values) {
    for (float y : values) a.push_back(x), b.push_back(y);
  }
  std::vector<float> got(a.size());
  VectorKernels().binary(BinaryOp::kPow, F32Src(a.data()), F32Src(b.data()), F32Dst(got.data()), a.size(), false);
  for (size_t i = 0; i < a.size(); ++i) {
    const float want = std::pow(a[i], b[i]);  // C99 Annex F semantics
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got[i])) << "pow(" << a[i] << ", " << b[i] << ") = " << got[i];
    } else {
      EXPECT_EQ(std::signbit(got[i]), std::signbit(want)) << "pow(" << a[i] << ", " << b[i] << ")";
      EXPECT_EQ(got[i], want) << "pow(" << a[i] << ", " << b[i] << ")";
    }
  }
}

TEST(VectorMath, EveryPathGivesTheSameBits) {
  const std::vector<float> xs = DenseFp32Sweep();
  std::vector<float> pow_a, pow_b;
  for (size_t i = 0; i + 1 < xs.size(); i += 97)
    pow_a.push_back(std::fabs(xs[i]) * 1e-3f), pow_b.push_back(xs[i + 1] * 1e-36f);
  const std::vector<SimdPath> paths = RunnablePaths();
  if (paths.size() < 3) std::printf("note: this CPU cannot run every path; compared %zu\n", paths.size());
  for (const Function& f : Functions()) {
    std::vector<uint32_t> first;
    for (SimdPath p : paths) {
      std::vector<float> ys(xs.size());
      VectorKernelsFor(p).unary(f.op, {}, F32Src(xs.data()), F32Dst(ys.data()), xs.size(), false);
      const std::vector<uint32_t> bits = CanonicalBits(ys);
      if (first.empty()) {
        first = bits;
        continue;
      }
      size_t differ = 0;
      for (size_t i = 0; i < bits.size(); ++i) differ += bits[i] != first[i];
      EXPECT_EQ(differ, 0u) << f.name << ": " << SimdPathName(p) << " differs from " << SimdPathName(paths[0]);
    }
  }
  std::vector<uint32_t> first;
  for (SimdPath p : paths) {
    std::vector<float> ys(pow_a.size());
    VectorKernelsFor(p).binary(BinaryOp::kPow, F32Src(pow_a.data()), F32Src(pow_b.data()), F32Dst(ys.data()), ys.size(),
                               false);
    const std::vector<uint32_t> bits = CanonicalBits(ys);
    if (first.empty()) first = bits;
    EXPECT_EQ(bits, first) << "pow: " << SimdPathName(p);
  }
}

TEST(VectorMath, TheAvx512PathIsCoveredWhereTheCpuHasIt) {
  if (!CpuCanRun(SimdPath::kAvx512)) {
    GTEST_SKIP() << "this CPU has no AVX-512: the avx512 path is built but not run here";
  }
  EXPECT_EQ(ActiveVectorSimdPath(), SimdPath::kAvx512);
}

}  // namespace
}  // namespace npu::kernels
