// The Vector kernels' loops: tails and broadcast operands, fp16 stores
// (rounding, saturation, overflow counts), row reductions, Welford statistics
// and softmax, each against a scalar or long double reference and bit for bit
// across every SIMD path the CPU can run.
#include "kernels/vector_kernels.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

#include "kernels/fp16.h"
#include "tests/kernels/vector_test_support.h"

namespace npu::kernels {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

std::vector<float> RandomFloats(size_t n, float lo, float hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

std::vector<half_bits> ToHalves(const std::vector<float>& v) {
  std::vector<half_bits> h(v.size());
  for (size_t i = 0; i < v.size(); ++i) h[i] = FloatToHalf(v[i]);
  return h;
}

TEST(VectorKernels, TailsAndBroadcastsMatchTheScalarArithmetic) {
  for (SimdPath p : RunnablePaths()) {
    const VectorKernelSet& k = VectorKernelsFor(p);
    for (size_t n = 0; n <= 70; ++n) {
      const std::vector<half_bits> a = ToHalves(RandomFloats(n, -100, 100, 7 + n));
      const float b = 3.25f;
      std::vector<half_bits> y(n + 1, 0xabcd);  // one guard element past the end
      k.binary(BinaryOp::kMul, F16Src(a.data()), VecSrc{&b, Storage::kF32, true}, F16Dst(y.data()), n, false);
      for (size_t i = 0; i < n; ++i) {
        ASSERT_EQ(y[i], FloatToHalf(HalfToFloat(a[i]) * b)) << SimdPathName(p) << " n=" << n << " i=" << i;
      }
      EXPECT_EQ(y[n], 0xabcd) << SimdPathName(p) << ": wrote past the end for n=" << n;
    }
  }
}

TEST(VectorKernels, Fp16StoresRoundOnceSaturateAndCountOverflows) {
  const std::vector<float> in = {65504.0f, 65519.0f, 65520.0f, 1e6f, -1e6f, kInf, -kInf, kNan, 1.0f, -2.5f, 6e-8f};
  // IEEE: 65520 and beyond round to inf; saturation: +-65504, NaN -> 0.
  for (SimdPath p : RunnablePaths()) {
    for (bool saturate : {false, true}) {
      std::vector<half_bits> out(in.size());
      const uint64_t over = VectorKernelsFor(p).narrow(in.data(), out.data(), in.size(), saturate);
      EXPECT_EQ(over, 6u) << SimdPathName(p);
      for (size_t i = 0; i < in.size(); ++i) {
        const half_bits want = saturate ? FloatToHalfSaturate(in[i]) : FloatToHalf(in[i]);
        if ((want & 0x7fff) > 0x7c00) {
          EXPECT_GT(out[i] & 0x7fff, 0x7c00) << i;  // a NaN
        } else {
          EXPECT_EQ(out[i], want) << SimdPathName(p) << " saturate=" << saturate << " i=" << i;
        }
      }
    }
  }
}

TEST(VectorKernels, PaddedTailLanesAreNotCountedAsOverflows) {
  // log(0) = -inf in every padding lane of a short vector: only real elements count.
  for (SimdPath p : RunnablePaths()) {
    for (size_t n = 1; n <= 20; ++n) {
      std::vector<float> x(n, 2.0f), y(n);
      x[n - 1] = 0.0f;  // one real -inf
      const uint64_t over = VectorKernelsFor(p).unary(UnaryOp::kLog, {}, F32Src(x.data()), F32Dst(y.data()), n, false);
      EXPECT_EQ(over, 1u) << SimdPathName(p) << " n=" << n;
    }
  }
}

TEST(VectorKernels, ConversionsEqualTheScalarOnesOnEveryPath) {
  std::vector<float> in = RandomFloats(5000, -70000, 70000, 3);
  for (uint32_t u = 0x33000000; u < 0x38900000; u += 1237) in.push_back(std::bit_cast<float>(u));  // subnormal halves
  for (SimdPath p : RunnablePaths()) {
    for (bool saturate : {false, true}) {
      std::vector<half_bits> out(in.size());
      VectorKernelsFor(p).narrow(in.data(), out.data(), in.size(), saturate);
      for (size_t i = 0; i < in.size(); ++i) {
        ASSERT_EQ(out[i], saturate ? FloatToHalfSaturate(in[i]) : FloatToHalf(in[i])) << in[i];
      }
      std::vector<float> back(in.size());
      VectorKernelsFor(p).widen(out.data(), back.data(), out.size());
      for (size_t i = 0; i < in.size(); ++i)
        ASSERT_EQ(std::bit_cast<uint32_t>(back[i]), std::bit_cast<uint32_t>(HalfToFloat(out[i])));
    }
  }
}

// A row's sum against long double: within n ulp-of-the-largest-partial bound
// (an fp32 sum of n terms), and the same bits on every path.
TEST(VectorKernels, RowReductionsAreAccurateAndPathIndependent) {
  for (size_t n : {1, 2, 15, 16, 17, 63, 64, 65, 200, 1000, 4099}) {
    const std::vector<float> x = RandomFloats(n, -1, 3, 11 + static_cast<uint32_t>(n));
    long double exact = 0, sum_abs = 0;
    float max = -kInf;
    for (float v : x) exact += v, sum_abs += std::fabs(v), max = std::max(max, v);
    std::vector<uint32_t> bits;
    for (SimdPath p : RunnablePaths()) {
      const VectorKernelSet& k = VectorKernelsFor(p);
      const float s = k.reduce(ReduceKind::kSum, F32Src(x.data()), n);
      EXPECT_LE(std::fabs(s - exact), sum_abs * 0x1p-24L * 7) << n;  // tree depth + lane depth << n
      EXPECT_EQ(k.reduce(ReduceKind::kMax, F32Src(x.data()), n), max);
      bits.push_back(std::bit_cast<uint32_t>(s));
    }
    for (uint32_t b : bits) EXPECT_EQ(b, bits[0]) << "row of " << n;
  }
  std::vector<float> with_nan = RandomFloats(100, -1, 1, 5);
  with_nan[77] = kNan;
  for (SimdPath p : RunnablePaths()) {
    for (ReduceKind kind : {ReduceKind::kSum, ReduceKind::kMax, ReduceKind::kMin}) {
      EXPECT_TRUE(std::isnan(VectorKernelsFor(p).reduce(kind, F32Src(with_nan.data()), with_nan.size())));
    }
  }
}

TEST(VectorKernels, ReduceIntoKeepsNanAndOrder) {
  for (SimdPath p : RunnablePaths()) {
    const VectorKernelSet& k = VectorKernelsFor(p);
    std::vector<float> acc = {1, 5, kNan, 0, -3}, row = {2, 4, 7, kNan, -3};
    k.reduce_into(ReduceKind::kMax, F32Src(row.data()), acc.data(), acc.size());
    EXPECT_EQ(acc[0], 2);
    EXPECT_EQ(acc[1], 5);
    EXPECT_TRUE(std::isnan(acc[2]));
    EXPECT_TRUE(std::isnan(acc[3]));
    EXPECT_EQ(acc[4], -3);
  }
}

// Welford statistics of rows far from zero (mean 1e4, std ~1): the naive
// E[x^2] - E[x]^2 in fp32 loses everything here.
TEST(VectorKernels, MomentsStayAccurateFarFromZero) {
  for (size_t n : {1, 3, 64, 65, 1000, 1024, 4097}) {  // 64 and 1024: equal counts in every partial lane
    std::vector<float> x = RandomFloats(n, 9998, 10002, 21 + static_cast<uint32_t>(n));
    long double mean = 0;
    for (float v : x) mean += v;
    mean /= n;
    long double m2 = 0;
    for (float v : x) m2 += (v - mean) * (v - mean);
    std::vector<double> seen;
    for (SimdPath p : RunnablePaths()) {
      const Moments m = VectorKernelsFor(p).moments(F32Src(x.data()), n);
      EXPECT_NEAR(m.mean, static_cast<double>(mean), 1e4 * 2e-7) << n;
      EXPECT_NEAR(m.m2, static_cast<double>(m2), 1e-3 * static_cast<double>(m2) + 1e-6) << n;
      seen.push_back(m.m2);
    }
    for (double v : seen) EXPECT_EQ(v, seen[0]) << "row of " << n;
  }
}

// softmax of a row against long double, with the max past the first
// 256-element block, -inf entries and a NaN row; the same bits on every path.
// exp(x - max) in fp32 rounds x - max first, which the exponential amplifies
// by |x - max| (torch does the same): up to |x - max| ulp of the result, plus
// a few ulp for exp, the sum (64 lanes and a tree) and the scaling.
TEST(VectorKernels, SoftmaxRowsMatchLongDouble) {
  for (size_t n : {1, 5, 255, 256, 257, 700, 1500, 17 * 256 + 5}) {  // the last: more blocks than lanes
    for (bool log : {false, true}) {
      std::vector<float> x = RandomFloats(n, -20, 20, 31 + static_cast<uint32_t>(n));
      if (n > 600) x[600] = 40.0f;
      if (n > 10) x[3] = -kInf;
      long double m = -kInf, s = 0;
      for (float v : x) m = std::max<long double>(m, v);
      for (float v : x) s += std::exp(static_cast<long double>(v) - m);
      std::vector<uint32_t> first;
      for (SimdPath p : RunnablePaths()) {
        std::vector<float> y(n), scratch(SoftmaxScratchFloats(n));
        VectorKernelsFor(p).softmax_row(F32Src(x.data()), F32Dst(y.data()), n, log, false, scratch.data());
        int bad = 0;
        for (size_t i = 0; i < n; ++i) {
          const long double d = x[i] - m;
          if (log) {
            // (x - max) - log(sum): absolute error ~ an ulp of the larger term.
            const long double ref = d - std::log(s);
            const long double ulp = std::ldexp(1.0L, std::ilogb(std::max<long double>(std::fabs(ref), 1)) - 23);
            bad += std::isinf(d) ? !(y[i] == ref) : !(std::fabs(y[i] - ref) <= 2 * ulp);
          } else {
            const double bound = 4 + (std::isinf(d) ? 0 : static_cast<double>(std::fabs(d)));
            bad += !(UlpErrorF32(y[i], std::exp(d) / s) <= bound);
          }
        }
        EXPECT_EQ(bad, 0) << "n=" << n << " log=" << log << " " << SimdPathName(p);
        if (first.empty()) first = CanonicalBits(y);
        EXPECT_EQ(CanonicalBits(y), first) << SimdPathName(p);
      }
    }
  }
  std::vector<float> nan_row = RandomFloats(300, -1, 1, 9), y(300), scratch(SoftmaxScratchFloats(300));
  nan_row[280] = kNan;
  VectorKernels().softmax_row(F32Src(nan_row.data()), F32Dst(y.data()), 300, false, false, scratch.data());
  for (float v : y) EXPECT_TRUE(std::isnan(v));
  std::vector<float> inf_row(300, -kInf);
  VectorKernels().softmax_row(F32Src(inf_row.data()), F32Dst(y.data()), 300, false, false, scratch.data());
  for (float v : y) EXPECT_TRUE(std::isnan(v));  // as torch: exp(-inf - -inf)
}

// fp16 in, fp16 out (the shorter exponential, ExpForHalf): every result
// within 0.51 fp16 ulp of long double's (the rounding's 0.5 and the fp32
// pipeline's few 1e-7), rows and columns; the same bits on every path.
TEST(VectorKernels, Fp16SoftmaxRoundsTheExactResult) {
  for (size_t n : {7, 256, 1000, 17 * 256 + 5}) {
    std::vector<float> x = RandomFloats(n, -12, 12, 51 + static_cast<uint32_t>(n));
    if (n > 10) x[5] = -kInf;
    const std::vector<half_bits> xh = ToHalves(x);
    long double m = -kInf, s = 0;
    for (half_bits h : xh) m = std::max<long double>(m, HalfToFloat(h));
    for (half_bits h : xh) s += std::exp(HalfToFloat(h) - m);
    std::vector<half_bits> first;
    for (SimdPath p : RunnablePaths()) {
      std::vector<half_bits> y(n), cols(n);
      std::vector<float> scratch(SoftmaxScratchFloats(n)), col_scratch(n);
      VectorKernelsFor(p).softmax_row(F16Src(xh.data()), F16Dst(y.data()), n, false, false, scratch.data());
      // The column kernel on the same row: one softmax of n along an axis of stride 1.
      VectorKernelsFor(p).softmax_columns(F16Src(xh.data()), F16Dst(cols.data()), n, 1, 1, false, false,
                                          col_scratch.data());
      double worst = 0, worst_cols = 0;
      for (size_t i = 0; i < n; ++i) {
        const long double ref = std::exp(HalfToFloat(xh[i]) - m) / s;
        worst = std::max(worst, UlpErrorF16(y[i], ref));
        worst_cols = std::max(worst_cols, UlpErrorF16(cols[i], ref));
      }
      EXPECT_LE(worst, 0.51) << "n=" << n << " " << SimdPathName(p);
      EXPECT_LE(worst_cols, 0.51 + n / 2.0 * 0x1p-13) << "n=" << n << " " << SimdPathName(p);  // sequential sum
      if (first.empty()) first = y;
      EXPECT_EQ(y, first) << SimdPathName(p);
    }
  }
}

TEST(VectorKernels, SoftmaxColumnsMatchTheRowKernelsReference) {
  const size_t len = 37, stride = 100, width = 70;
  const std::vector<float> x = RandomFloats(len * stride, -10, 10, 41);
  std::vector<uint32_t> first;
  for (SimdPath p : RunnablePaths()) {
    std::vector<float> y(len * stride, 0.0f), scratch(len * width);
    VectorKernelsFor(p).softmax_columns(F32Src(x.data()), F32Dst(y.data()), len, stride, width, false, false,
                                        scratch.data());
    for (size_t j = 0; j < width; ++j) {
      long double m = -kInf, s = 0;
      for (size_t c = 0; c < len; ++c) m = std::max<long double>(m, x[c * stride + j]);
      for (size_t c = 0; c < len; ++c) s += std::exp(x[c * stride + j] - m);
      for (size_t c = 0; c < len; ++c) {
        // As for rows; the sum here is sequential: up to len/2 ulp more.
        const long double d = x[c * stride + j] - m;
        EXPECT_LE(UlpErrorF32(y[c * stride + j], std::exp(d) / s), 2 + static_cast<double>(std::fabs(d)) + len / 2.0)
            << j;
      }
    }
    for (size_t c = 0; c < len; ++c) {
      for (size_t j = width; j < stride; ++j) EXPECT_EQ(y[c * stride + j], 0.0f) << "wrote outside the columns";
    }
    if (first.empty()) first = CanonicalBits(y);
    EXPECT_EQ(CanonicalBits(y), first) << SimdPathName(p);
  }
}

// fp16 -> fp16 transcendentals look their results up in a table the kernel
// computed: the same bits and overflow counts as computing in fp32 and rounding
// (narrow), saturated or not, on every path, in place too, over chunk
// boundaries and tails.
TEST(VectorKernels, Fp16TablesGiveTheComputedBits) {
  std::vector<half_bits> all(65536 + 5);
  for (size_t h = 0; h < all.size(); ++h) all[h] = static_cast<half_bits>(h * 40503u);  // every half, shuffled
  for (SimdPath p : RunnablePaths()) {
    const VectorKernelSet& k = VectorKernelsFor(p);
    for (UnaryOp op : {UnaryOp::kExp, UnaryOp::kLog, UnaryOp::kErf, UnaryOp::kSigmoid, UnaryOp::kTanh, UnaryOp::kSilu,
                       UnaryOp::kGeluErf, UnaryOp::kGeluTanh, UnaryOp::kSin, UnaryOp::kCos}) {
      std::vector<float> wide(all.size());
      k.unary(op, {}, F16Src(all.data()), F32Dst(wide.data()), all.size(), false);
      for (bool saturate : {false, true}) {
        std::vector<half_bits> want(all.size()), got(all.size()), in_place = all;
        const uint64_t want_over = k.narrow(wide.data(), want.data(), wide.size(), saturate);
        const uint64_t got_over = k.unary(op, {}, F16Src(all.data()), F16Dst(got.data()), all.size(), saturate);
        const uint64_t in_place_over =
            k.unary(op, {}, F16Src(in_place.data()), F16Dst(in_place.data()), all.size(), saturate);
        EXPECT_EQ(got_over, want_over) << SimdPathName(p) << " op " << static_cast<int>(op);
        EXPECT_EQ(in_place_over, want_over) << SimdPathName(p) << " op " << static_cast<int>(op);
        size_t differ = 0;
        for (size_t i = 0; i < all.size(); ++i) {
          const auto same = [&](half_bits h) {
            return (want[i] & 0x7fff) > 0x7c00 ? (h & 0x7fff) > 0x7c00 : h == want[i];  // NaN payloads aside
          };
          differ += !same(got[i]) + !same(in_place[i]);
        }
        EXPECT_EQ(differ, 0u) << SimdPathName(p) << " op " << static_cast<int>(op) << " saturate " << saturate;
      }
    }
  }
}

TEST(VectorKernels, ForcedPathFallsBackToWhatTheCpuHas) {
  for (SimdPath p : {SimdPath::kAvx512, SimdPath::kAvx2, SimdPath::kPortable}) {
    ForceVectorSimdPath(p);
    EXPECT_EQ(ActiveVectorSimdPath(), ResolveSimdPath(p));
    EXPECT_TRUE(CpuCanRun(ActiveVectorSimdPath()));
  }
  ForceVectorSimdPath(SimdPath::kAuto);
  EXPECT_EQ(ActiveVectorSimdPath(), ResolveSimdPath(SimdPath::kAuto));
}

}  // namespace
}  // namespace npu::kernels
