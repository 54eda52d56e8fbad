// Cube GEMM numerics: bitwise determinism across threads, SIMD paths and tile
// shapes, and accuracy against a float64 reference.
//
// Error bound. Products of two halves are exact in fp32 (11 x 11 significand bits,
// exponents far inside fp32's range), so the only rounding is the fp32 recursive
// summation acc = fma(a_k, b_k, acc), k = 0..K-1, which rounds at most K times:
//   |C - sum_k a_k b_k| <= gamma_K * sum_k |a_k b_k|,  gamma_K = K u / (1 - K u),
// u = 2^-24 (Higham, Accuracy and Stability, 4.2). Bias adds one more rounding
// (gamma_{K+1}, with |bias| in the sum); ReLU is 1-Lipschitz; GELU is ~1.13-Lipschitz
// plus its own fp32 evaluation error. An fp16 output adds the final rounding:
// half an fp16 ulp, <= 2^-11 |value| (normal) or 2^-25 (subnormal).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/parallel_grain.h"
#include "kernels/cube_gemm.h"
#include "kernels/cube_packed_b.h"
#include "kernels/fp16.h"
#include "kernels/openmp.h"

namespace npu::kernels {
namespace {

// Independent of the kernel's conversions: decode IEEE binary16 by its definition.
double HalfBitsToDouble(half_bits h) {
  const int sign = h >> 15, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  double v;
  if (exp == 0x1f) {
    v = mant ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else if (exp == 0) {
    v = std::ldexp(mant, -24);
  } else {
    v = std::ldexp(1024 + mant, exp - 25);
  }
  return sign ? -v : v;
}

// FixPipe's epilogue in these tests: one activation step (elementwise_program.h).
enum class Epilogue { kNone, kRelu, kGeluErf, kGeluTanh };

struct Operands {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool trans_a = false, trans_b = false;
  bool broadcast_a = false;
  ElemType in_type = ElemType::kFloat16;
  std::vector<half_bits> a16, b16;  // storage when in_type is fp16
  std::vector<float> a32, b32;      // storage when in_type is fp32
  std::vector<float> bias;
  Epilogue epilogue = Epilogue::kNone;
  ElemType out_type = ElemType::kFloat32;
  bool saturate = false;

  int64_t a_elems() const { return broadcast_a ? m * k : batch * m * k; }
  int64_t b_elems() const { return batch * k * n; }
  // Element (i, kk) of op(A) for batch bt, as the kernel must see it (fp16 value).
  double A(int64_t bt, int64_t i, int64_t kk) const {
    const int64_t idx = (broadcast_a ? 0 : bt * m * k) + (trans_a ? kk * m + i : i * k + kk);
    return in_type == ElemType::kFloat16 ? HalfBitsToDouble(a16[idx]) : HalfBitsToDouble(FloatToHalf(a32[idx]));
  }
  double B(int64_t bt, int64_t kk, int64_t j) const {
    const int64_t idx = bt * k * n + (trans_b ? j * k + kk : kk * n + j);
    return in_type == ElemType::kFloat16 ? HalfBitsToDouble(b16[idx]) : HalfBitsToDouble(FloatToHalf(b32[idx]));
  }
};

// op(A) and op(B) of every batch as dense float64 (A: batch x m x k, B: batch x k x n).
struct DenseOperands {
  std::vector<double> a, b;
  explicit DenseOperands(const Operands& o) : a(o.batch * o.m * o.k), b(o.batch * o.k * o.n) {
    for (int64_t bt = 0; bt < o.batch; ++bt) {
      for (int64_t i = 0; i < o.m; ++i) {
        for (int64_t x = 0; x < o.k; ++x) a[(bt * o.m + i) * o.k + x] = o.A(bt, i, x);
      }
      for (int64_t x = 0; x < o.k; ++x) {
        for (int64_t j = 0; j < o.n; ++j) b[(bt * o.k + x) * o.n + j] = o.B(bt, x, j);
      }
    }
  }
};

// Fills with values of magnitude up to `scale`, already representable in fp16
// when the input type is fp16; fp32 inputs get full-precision floats.
void Fill(Operands& o, std::mt19937& rng, float scale) {
  std::uniform_real_distribution<float> dist(-scale, scale);
  if (o.in_type == ElemType::kFloat16) {
    o.a16.resize(o.a_elems());
    o.b16.resize(o.b_elems());
    for (auto& v : o.a16) v = FloatToHalf(dist(rng));
    for (auto& v : o.b16) v = FloatToHalf(dist(rng));
  } else {
    o.a32.resize(o.a_elems());
    o.b32.resize(o.b_elems());
    for (auto& v : o.a32) v = dist(rng);
    for (auto& v : o.b32) v = dist(rng);
  }
}

// How B reaches the kernel: as a matrix it packs itself, or packed beforehand
// (PackedCubeB, as a plan packs constant weights).
enum class BFeed { kMatrix, kPrePacked };

// Output as raw bytes, so comparisons are bitwise.
std::vector<uint8_t> RunGemm(const Operands& o, const CubeTileShape& tile, int threads, SimdPath path,
                         std::vector<CubeTileCounts>* counts = nullptr, BFeed feed = BFeed::kMatrix) {
  const size_t esize = o.out_type == ElemType::kFloat32 ? 4 : 2;
  std::vector<uint8_t> c(o.batch * o.m * o.n * esize, 0xcd);
  GemmProblem p;
  p.batch = o.batch;
  p.m = o.m;
  p.n = o.n;
  p.k = o.k;
  const bool f16 = o.in_type == ElemType::kFloat16;
  p.a = f16 ? static_cast<const void*>(o.a16.data()) : o.a32.data();
  p.b = f16 ? static_cast<const void*>(o.b16.data()) : o.b32.data();
  p.a_type = p.b_type = o.in_type;
  p.lda = o.trans_a ? o.m : o.k;
  p.ldb = o.trans_b ? o.k : o.n;
  p.trans_a = o.trans_a;
  p.trans_b = o.trans_b;
  p.a_batch_stride = o.broadcast_a ? 0 : o.m * o.k;
  p.b_batch_stride = o.k * o.n;
  p.bias = o.bias.empty() ? nullptr : o.bias.data();
  EwProgram program;
  if (o.epilogue != Epilogue::kNone) {
    EwStep step;
    step.unary = o.epilogue == Epilogue::kRelu     ? UnaryOp::kRelu
                 : o.epilogue == Epilogue::kGeluErf ? UnaryOp::kGeluErf
                                                    : UnaryOp::kGeluTanh;
    program.steps.push_back(step);
  }
  const CubeEpilogue epilogue{&program, {}};
  if (o.epilogue != Epilogue::kNone) p.epilogue = &epilogue;
  p.c = c.data();
  p.c_type = o.out_type;
  p.ldc = o.n;
  p.c_batch_stride = o.m * o.n;
  p.saturate_fp16 = o.saturate;
  PackedCubeB packed;
  if (feed == BFeed::kPrePacked) {
    packed = PackedCubeB::Pack(OperandView{p.b, p.b_type, p.ldb, p.trans_b}, o.k, o.n, o.batch, p.b_batch_stride,
                               p.saturate_fp16);
    p.packed_b = &packed;
    p.b = nullptr;  // the kernel must not read it
  }
  ForceCubeSimdPath(path);
  omp_set_num_threads(threads);
  ScopedSmallWorkInParallel parallel;  // the test's small shapes on the whole team too
  CubeGemm(p, tile, counts);
  ForceCubeSimdPath(SimdPath::kAuto);
  return c;
}

double OutAt(const Operands& o, const std::vector<uint8_t>& c, int64_t idx) {
  if (o.out_type == ElemType::kFloat32) {
    float v;
    std::memcpy(&v, c.data() + idx * 4, 4);
    return v;
  }
  half_bits h;
  std::memcpy(&h, c.data() + idx * 2, 2);
  return HalfBitsToDouble(h);
}

double GeluRef(double x, Epilogue e) {
  if (e == Epilogue::kGeluErf) return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}

// Checks every element against float64 with the bound from the file comment.
void ExpectWithinBound(const Operands& o, const std::vector<uint8_t>& c) {
  const double u = std::ldexp(1.0, -24);
  const double kk = static_cast<double>(o.k + (o.bias.empty() ? 0 : 1));
  const double gamma = kk * u / (1.0 - kk * u);
  const DenseOperands d(o);
  int failures = 0;
  for (int64_t bt = 0; bt < o.batch; ++bt) {
    for (int64_t i = 0; i < o.m; ++i) {
      for (int64_t j = 0; j < o.n; ++j) {
        double sum = 0.0, abs_sum = 0.0;
        for (int64_t x = 0; x < o.k; ++x) {
          const double prod = d.a[(bt * o.m + i) * o.k + x] * d.b[(bt * o.k + x) * o.n + j];
          sum += prod;  // exact enough: float64 has 29 more bits than the products need
          abs_sum += std::fabs(prod);
        }
        if (!o.bias.empty()) {
          sum += o.bias[j];
          abs_sum += std::fabs(o.bias[j]);
        }
        double bound = gamma * abs_sum;
        double ref = sum;
        switch (o.epilogue) {
          case Epilogue::kNone: break;
          case Epilogue::kRelu: ref = std::max(sum, 0.0); break;
          default:
            ref = GeluRef(sum, o.epilogue);
            bound = 1.2 * bound + std::ldexp(std::fabs(sum) + std::fabs(ref), -21);
        }
        const double got = OutAt(o, c, (bt * o.m + i) * o.n + j);
        bool ok;
        if (o.out_type == ElemType::kFloat16) {
          const double lo = std::fabs(ref) - bound, hi = std::fabs(ref) + bound;
          const double sign = ref < 0 ? -1.0 : 1.0;
          if (lo >= 65520.0) {
            ok = got == sign * (o.saturate ? 65504.0 : INFINITY);
          } else if (hi >= 65504.0) {
            ok = got == sign * 65504.0 || (!o.saturate && got == sign * INFINITY);
          } else {
            ok = std::fabs(got - ref) <= bound + std::ldexp(hi, -11) + std::ldexp(1.0, -25);
          }
        } else {
          ok = std::fabs(got - ref) <= bound;
        }
        if (!ok && ++failures <= 5) {
          ADD_FAILURE() << "C[" << bt << "][" << i << "][" << j << "] = " << got << ", float64 " << ref
                        << ", bound " << bound;
        }
      }
    }
  }
  EXPECT_EQ(failures, 0);
}

// The contract in its plainest form: one fp32 accumulator per element, k in order,
// one fused multiply-add per step. The kernel must match it bit for bit.
void ExpectSequentialFmaOrder(const Operands& o, const std::vector<uint8_t>& c) {
  ASSERT_EQ(o.out_type, ElemType::kFloat32);
  ASSERT_TRUE(o.bias.empty());
  ASSERT_EQ(o.epilogue, Epilogue::kNone);
  const DenseOperands d(o);
  int failures = 0;
  for (int64_t bt = 0; bt < o.batch; ++bt) {
    for (int64_t i = 0; i < o.m; ++i) {
      for (int64_t j = 0; j < o.n; ++j) {
        float acc = 0.0f;
        for (int64_t x = 0; x < o.k; ++x) {
          acc = std::fma(static_cast<float>(d.a[(bt * o.m + i) * o.k + x]),
                         static_cast<float>(d.b[(bt * o.k + x) * o.n + j]), acc);
        }
        const double got = OutAt(o, c, (bt * o.m + i) * o.n + j);
        if (std::memcmp(&acc, c.data() + ((bt * o.m + i) * o.n + j) * 4, 4) != 0 && ++failures <= 5) {
          ADD_FAILURE() << "C[" << bt << "][" << i << "][" << j << "] = " << got << ", sequential fma " << acc;
        }
      }
    }
  }
  EXPECT_EQ(failures, 0);
}

std::vector<SimdPath> AvailablePaths() {
  std::vector<SimdPath> paths;
  for (SimdPath p : {SimdPath::kAvx512, SimdPath::kAvx2, SimdPath::kPortable}) {
    ForceCubeSimdPath(p);
    if (ActiveCubeSimdPath() == p) paths.push_back(p);
  }
  ForceCubeSimdPath(SimdPath::kAuto);
  return paths;
}

const char* PathName(SimdPath p) {
  switch (p) {
    case SimdPath::kAvx512: return "avx512";
    case SimdPath::kAvx2: return "avx2";
    case SimdPath::kPortable: return "portable";
    default: return "auto";
  }
}

// The last shape's n is off the 16-column fractal grid, which makes the kernel pack
// B per tile instead of once per call: both host paths must agree.
const std::vector<CubeTileShape> kTiles = {{128, 128, 256}, {16, 16, 16}, {48, 80, 32}, {64, 256, 512}, {32, 40, 48}};

// Runs every available path x thread count x tile shape, expects all outputs
// bitwise equal, and returns one of them.
std::vector<uint8_t> RunAllWaysIdentical(const Operands& o) {
  std::vector<uint8_t> first;
  bool have_first = false;
  for (SimdPath path : AvailablePaths()) {
    for (int threads : {1, 2}) {
      for (const CubeTileShape& tile : kTiles) {
        // One thread on two tile shapes is enough: the thread count only decides
        // which thread runs a tile, and every tile shape runs on two threads.
        if (threads == 1 && &tile > &kTiles[1]) continue;
        std::vector<uint8_t> c = RunGemm(o, tile, threads, path);
        if (!have_first) {
          first = std::move(c);
          have_first = true;
          continue;
        }
        EXPECT_TRUE(c == first) << "differs: path " << PathName(path) << ", " << threads << " threads, tile "
                                << tile.m << "x" << tile.n << "x" << tile.k;
      }
      // B packed beforehand gives the same bits (a plan's constant weights).
      for (const CubeTileShape& tile : {kTiles[0], kTiles[2]}) {
        EXPECT_TRUE(RunGemm(o, tile, threads, path, nullptr, BFeed::kPrePacked) == first)
            << "pre-packed B differs: path " << PathName(path) << ", " << threads << " threads, tile " << tile.m
            << "x" << tile.n << "x" << tile.k;
      }
    }
  }
  return first;
}

struct ShapeCase {
  int64_t m, n, k;
  bool trans_a, trans_b;
};

class CubeGemmShapes : public ::testing::TestWithParam<ShapeCase> {};

TEST_P(CubeGemmShapes, DeterministicSequentialAndWithinFloat64Bound) {
  const ShapeCase s = GetParam();
  Operands o;
  o.m = s.m;
  o.n = s.n;
  o.k = s.k;
  o.trans_a = s.trans_a;
  o.trans_b = s.trans_b;
  std::mt19937 rng(static_cast<uint32_t>(s.m * 131 + s.n * 17 + s.k));
  Fill(o, rng, 2.0f);
  const std::vector<uint8_t> c = RunAllWaysIdentical(o);
  ExpectSequentialFmaOrder(o, c);
  ExpectWithinBound(o, c);
}

INSTANTIATE_TEST_SUITE_P(Shapes, CubeGemmShapes,
                         ::testing::Values(ShapeCase{1, 1, 1, false, false}, ShapeCase{15, 17, 33, false, false},
                                           ShapeCase{1000, 1, 1000, false, false}, ShapeCase{1, 1000, 7, false, false},
                                           ShapeCase{37, 45, 1, false, false}, ShapeCase{9, 35, 4097, false, false},
                                           ShapeCase{33, 47, 129, false, false}, ShapeCase{33, 47, 129, true, false},
                                           ShapeCase{33, 47, 129, false, true}, ShapeCase{33, 47, 129, true, true},
                                           ShapeCase{143, 161, 301, false, false}, ShapeCase{143, 161, 301, true, true},
                                           ShapeCase{96, 200, 260, false, false}, ShapeCase{5, 3, 0, false, false}),
                         [](const auto& info) {
                           const ShapeCase& s = info.param;
                           return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) +
                                  (s.trans_a ? "_ta" : "") + (s.trans_b ? "_tb" : "");
                         });

TEST(CubeGemm, Fp32InputsAreRoundedToFp16) {
  Operands o;
  o.m = 29;
  o.n = 31;
  o.k = 70;
  o.in_type = ElemType::kFloat32;
  o.trans_b = true;
  std::mt19937 rng(7);
  Fill(o, rng, 3.0f);
  const std::vector<uint8_t> c = RunAllWaysIdentical(o);
  ExpectSequentialFmaOrder(o, c);
  ExpectWithinBound(o, c);
}

TEST(CubeGemm, BatchWithBroadcastA) {
  Operands o;
  o.batch = 3;
  o.broadcast_a = true;
  o.m = 21;
  o.n = 40;
  o.k = 50;
  std::mt19937 rng(11);
  Fill(o, rng, 1.0f);
  const std::vector<uint8_t> c = RunAllWaysIdentical(o);
  ExpectSequentialFmaOrder(o, c);
  ExpectWithinBound(o, c);
}

TEST(CubeGemm, Epilogues) {
  for (ElemType out : {ElemType::kFloat32, ElemType::kFloat16}) {
    for (Epilogue e : {Epilogue::kNone, Epilogue::kRelu, Epilogue::kGeluErf, Epilogue::kGeluTanh}) {
      Operands o;
      o.m = 19;
      o.n = 37;
      o.k = 45;
      o.out_type = out;
      o.epilogue = e;
      std::mt19937 rng(static_cast<uint32_t>(static_cast<int>(e) * 10 + static_cast<int>(out)));
      Fill(o, rng, 1.0f);
      std::uniform_real_distribution<float> dist(-3.0f, 3.0f);
      o.bias.resize(o.n);
      for (float& v : o.bias) v = dist(rng);
      SCOPED_TRACE("epilogue " + std::to_string(static_cast<int>(e)) + " out " + std::to_string(static_cast<int>(out)));
      const std::vector<uint8_t> c = RunAllWaysIdentical(o);
      ExpectWithinBound(o, c);
    }
  }
}

// Sums close to and beyond the fp16 range: with saturation (Ascend 910) they clamp to
// +-65504, without they become +-inf; the fp32 accumulation itself never overflows.
TEST(CubeGemm, NearFp16Overflow) {
  for (bool saturate : {false, true}) {
    Operands o;
    o.m = 17;
    o.n = 33;
    o.k = 40;
    o.out_type = ElemType::kFloat16;
    o.saturate = saturate;
    std::mt19937 rng(saturate ? 5 : 6);
    std::uniform_real_distribution<float> dist(30.0f, 60.0f);
    o.a16.resize(o.m * o.k);
    o.b16.resize(o.k * o.n);
    // Row i scales its products so sums sweep from ~1e4 to ~1e5 across rows, with signs.
    for (int64_t i = 0; i < o.m; ++i) {
      for (int64_t x = 0; x < o.k; ++x) {
        const float scale = 0.15f + 0.05f * static_cast<float>(i);
        o.a16[i * o.k + x] = FloatToHalf((i % 2 ? -1.0f : 1.0f) * scale * dist(rng));
      }
    }
    for (auto& v : o.b16) v = FloatToHalf(dist(rng));
    // Also the largest halves themselves: 65504 * 65504 is exact in fp32.
    o.a16[0] = kHalfMaxBits;
    o.b16[0] = kHalfMaxBits;
    SCOPED_TRACE(saturate ? "saturate" : "ieee");
    const std::vector<uint8_t> c = RunAllWaysIdentical(o);
    ExpectWithinBound(o, c);
  }
  // Accumulators themselves stay finite where the fp16 output would not.
  Operands o;
  o.m = 3;
  o.n = 5;
  o.k = 64;
  o.a16.assign(o.m * o.k, kHalfMaxBits);
  o.b16.assign(o.k * o.n, kHalfMaxBits);
  const std::vector<uint8_t> c = RunAllWaysIdentical(o);
  ExpectSequentialFmaOrder(o, c);
  ExpectWithinBound(o, c);
}

TEST(CubeGemm, SubnormalInputsAndOutputs) {
  for (ElemType out : {ElemType::kFloat32, ElemType::kFloat16}) {
    Operands o;
    o.m = 23;
    o.n = 19;
    o.k = 37;
    o.out_type = out;
    std::mt19937 rng(3);
    std::uniform_int_distribution<int> sub(1, 0x3ff);
    std::uniform_real_distribution<float> small(-0.01f, 0.01f);
    o.a16.resize(o.m * o.k);
    o.b16.resize(o.k * o.n);
    for (auto& v : o.a16) v = static_cast<half_bits>(sub(rng) | (rng() & 1 ? 0x8000 : 0));  // subnormal halves
    for (auto& v : o.b16) v = FloatToHalf(small(rng));  // products and sums land in fp16's subnormal range
    SCOPED_TRACE(out == ElemType::kFloat32 ? "fp32 out" : "fp16 out");
    const std::vector<uint8_t> c = RunAllWaysIdentical(o);
    if (out == ElemType::kFloat32) ExpectSequentialFmaOrder(o, c);
    ExpectWithinBound(o, c);
  }
}

TEST(CubeGemm, TileCountsFollowTheRequestedTiles) {
  Operands o;
  o.batch = 2;
  o.m = 40;
  o.n = 70;
  o.k = 33;
  std::mt19937 rng(1);
  Fill(o, rng, 1.0f);
  std::vector<CubeTileCounts> counts;
  RunGemm(o, CubeTileShape{32, 48, 16}, 2, SimdPath::kAuto, &counts);
  ASSERT_EQ(counts.size(), 2u * 2u * 2u);
  size_t t = 0;
  for (int64_t bt = 0; bt < 2; ++bt) {
    for (int64_t m0 : {0, 32}) {
      for (int64_t n0 : {0, 48}) {
        const CubeTileCounts& c = counts[t++];
        const int64_t mt = m0 == 0 ? 32 : 8, nt = n0 == 0 ? 48 : 22;
        EXPECT_EQ(c.batch, bt);
        EXPECT_EQ(c.m0, m0);
        EXPECT_EQ(c.n0, n0);
        const uint64_t fm = (mt + 15) / 16, fn = (nt + 15) / 16, fk = 3;
        EXPECT_EQ(c.fractal_ops, fm * fn * fk);
        EXPECT_EQ(c.mte1_bytes, (fm + fn) * fk * 512);
        EXPECT_EQ(c.mte2_bytes, static_cast<uint64_t>((mt + nt) * 33 * 2));
        EXPECT_EQ(c.fixpipe_bytes, static_cast<uint64_t>(mt * nt * 4));
        EXPECT_EQ(c.k_steps, 3u);
      }
    }
  }
}

// fp16 results beyond the range are counted per tile, saturated or not; so are
// inf and NaN in fp32 output. The count is what FixPipe's cast saw, so it is the
// same whatever the path or thread count.
TEST(CubeGemm, CountsOverflowingResultsPerTile) {
  for (ElemType out : {ElemType::kFloat16, ElemType::kFloat32}) {
    for (bool saturate : {false, true}) {
      Operands o;
      o.m = 40;
      o.n = 50;
      o.k = 4;
      o.out_type = out;
      o.saturate = saturate;
      o.a16.assign(o.m * o.k, FloatToHalf(1.0f));
      o.b16.assign(o.k * o.n, FloatToHalf(1.0f));
      // Element (i, j) is 4 * a_i * b_j. Rows 3 and 35 (a = +-128) meet columns 7
      // and 45 (b = 128) at +-65536, past fp16's 65504. Column 30 (b = 16376) is
      // 65504 exactly in the other rows, the largest half and no overflow, but
      // overflows in rows 3 and 35; column 31 (b = 16380) is 65520, which rounds
      // to inf, in every row; column 9 holds an inf, so it is inf or NaN throughout.
      auto set_a = [&](int64_t i, float v) { for (int64_t x = 0; x < o.k; ++x) o.a16[i * o.k + x] = FloatToHalf(v); };
      set_a(3, 128.0f);
      set_a(35, -128.0f);
      for (int64_t x = 0; x < o.k; ++x) {
        o.b16[x * o.n + 7] = o.b16[x * o.n + 45] = FloatToHalf(128.0f);
        o.b16[x * o.n + 30] = FloatToHalf(16376.0f);
        o.b16[x * o.n + 31] = FloatToHalf(16380.0f);
      }
      o.b16[0 * o.n + 9] = FloatToHalf(INFINITY);
      std::vector<CubeTileCounts> counts;
      const std::vector<uint8_t> c = RunGemm(o, CubeTileShape{32, 32, 64}, 2, SimdPath::kAuto, &counts);
      ASSERT_EQ(counts.size(), 4u);  // tiles (0,0) (0,32) (32,0) (32,32)
      SCOPED_TRACE(std::string(out == ElemType::kFloat16 ? "fp16" : "fp32") + (saturate ? " saturating" : ""));
      const uint64_t f16 = out == ElemType::kFloat16 ? 1 : 0;  // only fp16 overflows at these magnitudes
      // Tile (0,0), rows 0-31 x columns 0-31: (3,7), (3,30), column 31 and column 9.
      EXPECT_EQ(counts[0].overflow_elements, f16 * (2 + 32) + 32);
      EXPECT_EQ(counts[1].overflow_elements, f16);                // (3,45)
      EXPECT_EQ(counts[2].overflow_elements, f16 * (2 + 8) + 8);  // rows 32-39
      EXPECT_EQ(counts[3].overflow_elements, f16);                // (35,45)
      if (out == ElemType::kFloat16) {
        EXPECT_EQ(OutAt(o, c, 0 * o.n + 30), 65504.0);
        EXPECT_EQ(OutAt(o, c, 0 * o.n + 31), saturate ? 65504.0 : INFINITY);
        EXPECT_EQ(OutAt(o, c, 35 * o.n + 7), saturate ? -65504.0 : -INFINITY);
      }
    }
  }
}

// Saturation mode rounds an fp32 operand that would be inf or NaN in fp16 to
// +-65504 or 0, so the results hide it; the first tile counts each such operand
// once (NaN, +-inf, 65520; 65519 and 65504 round to 65504 as IEEE does and are
// not counted), with B as a matrix or pre-packed, A plain or transposed, so a
// NaN in a batch still sets the float status. In inf_nan mode the results
// carry them.
TEST(CubeGemm, CountsTheOperandsSaturationHides) {
  for (bool saturate : {false, true}) {
    for (BFeed feed : {BFeed::kMatrix, BFeed::kPrePacked}) {
      for (bool trans_a : {false, true}) {
        Operands o;
        o.m = 40, o.n = 50, o.k = 6;
        o.in_type = ElemType::kFloat32;
        o.trans_a = trans_a;
        o.saturate = saturate;
        o.a32.assign(o.m * o.k, 0.5f);
        o.b32.assign(o.k * o.n, 0.25f);
        o.a32[7] = NAN, o.a32[100] = -INFINITY, o.a32[200] = 65520.0f, o.a32[201] = 65519.0f;
        o.b32[3] = 1e5f, o.b32[60] = NAN, o.b32[61] = 65504.0f;
        std::vector<CubeTileCounts> counts;
        RunGemm(o, CubeTileShape{32, 32, 64}, 2, SimdPath::kAuto, &counts, feed);
        ASSERT_EQ(counts.size(), 4u);
        SCOPED_TRACE(::testing::Message() << "saturate " << saturate << " pre-packed "
                                          << (feed == BFeed::kPrePacked) << " trans_a " << trans_a);
        if (saturate) {  // every result is finite: the count is the operands'
          EXPECT_EQ(counts[0].overflow_elements, 5u);
          for (size_t t = 1; t < counts.size(); ++t) EXPECT_EQ(counts[t].overflow_elements, 0u);
        } else {  // the inf and NaN results are FixPipe's to count, per tile
          EXPECT_GT(counts[0].overflow_elements, 0u);
        }
      }
    }
  }
}

// Channel-major output (a convolution's NCHW): rows are the pixels of
// consecutive images, columns their channels. The same bits as row-major C,
// transposed per image.
TEST(CubeGemm, ChannelMajorOutputIsRowMajorTransposedPerImage) {
  for (ElemType out : {ElemType::kFloat32, ElemType::kFloat16}) {
    Operands o;
    o.m = 3 * 37;  // 3 images of 37 pixels: tiles straddle images
    o.n = 45;
    o.k = 70;
    o.out_type = out;
    std::mt19937 rng(21);
    Fill(o, rng, 1.0f);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    o.bias.resize(o.n);
    for (float& v : o.bias) v = dist(rng);
    o.epilogue = Epilogue::kRelu;
    EwProgram relu;
    relu.steps.push_back(EwStep{});
    const CubeEpilogue epilogue{&relu, {}};
    const size_t esize = out == ElemType::kFloat32 ? 4 : 2;
    const std::vector<uint8_t> row_major = RunGemm(o, CubeTileShape{32, 32, 64}, 1, SimdPath::kAuto);
    for (int threads : {1, 2}) {
      std::vector<uint8_t> nchw(o.m * o.n * esize, 0xcd);
      GemmProblem p;
      p.m = o.m, p.n = o.n, p.k = o.k;
      p.a = o.a16.data(), p.lda = o.k;
      p.b = o.b16.data(), p.ldb = o.n;
      p.bias = o.bias.data();
      p.epilogue = &epilogue;
      p.c = nchw.data();
      p.c_type = out;
      p.c_layout = CubeOutputLayout::kChannelMajor;
      p.c_image_rows = 37;
      p.c_image_stride = 37 * o.n;
      omp_set_num_threads(threads);
      ScopedSmallWorkInParallel parallel;
      CubeGemm(p, CubeTileShape{32, 32, 64}, nullptr);
      int failures = 0;
      for (int64_t img = 0; img < 3; ++img) {
        for (int64_t ch = 0; ch < o.n; ++ch) {
          for (int64_t px = 0; px < 37; ++px) {
            const uint8_t* want = row_major.data() + ((img * 37 + px) * o.n + ch) * esize;
            const uint8_t* got = nchw.data() + ((img * o.n + ch) * 37 + px) * esize;
            if (std::memcmp(want, got, esize) != 0 && ++failures <= 5) {
              ADD_FAILURE() << "image " << img << " channel " << ch << " pixel " << px;
            }
          }
        }
      }
      EXPECT_EQ(failures, 0) << threads << " threads";
    }
  }
}

// The per-thread buffers are had before the parallel region: a GEMM too big for
// them throws std::bad_alloc on the caller instead of terminating the process.
TEST(CubeGemm, BuffersThatCannotBeHadThrowBeforeAnyTileRuns) {
  GemmProblem p;
  p.m = p.n = 1;
  p.k = int64_t{1} << 50;  // packed A alone would need 2^52 bytes per thread
  std::vector<float> c(1);
  p.c = c.data();
  p.ldc = 1;
  omp_set_num_threads(2);
  EXPECT_THROW(CubeGemm(p, CubeTileShape{}, nullptr), std::bad_alloc);
}

TEST(CubeGemm, ForcedPathFallsBackToWhatTheCpuHas) {
  for (SimdPath p : {SimdPath::kAuto, SimdPath::kAvx512, SimdPath::kAvx2, SimdPath::kPortable}) {
    ForceCubeSimdPath(p);
    const SimdPath active = ActiveCubeSimdPath();
    EXPECT_NE(active, SimdPath::kAuto);
    if (p == SimdPath::kPortable) {
      EXPECT_EQ(active, SimdPath::kPortable);
    }
  }
  ForceCubeSimdPath(SimdPath::kAuto);
  const std::vector<SimdPath> paths = AvailablePaths();
  if (std::find(paths.begin(), paths.end(), SimdPath::kAvx512) == paths.end()) {
    std::printf("note: this CPU has no AVX-512; the avx512 path is not exercised here\n");
  }
}

}  // namespace
}  // namespace npu::kernels
