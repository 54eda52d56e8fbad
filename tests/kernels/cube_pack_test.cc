// MTE1 packing layouts, checked element by element for every sliver height the
// SIMD paths use (including AVX-512's 12 rows, which this test reaches on any CPU
// because the layout does not depend on the Cube path), in both float modes and
// on each packing path this CPU can run (forced with ForceCubeSimdPath). The
// fp32 operands hold values past fp16's range, infinities and NaNs; what they
// round to comes from the float64 definition (half_reference.h).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/cpu_features.h"
#include "kernels/cube_gemm.h"
#include "kernels/cube_operand_rounding.h"
#include "kernels/cube_pack.h"
#include "kernels/cube_packed_b.h"
#include "kernels/fp16.h"
#include "tests/kernels/half_reference.h"

// GCC 12's AVX-512 conversion intrinsics start from an undefined register and
// trip -Wmaybe-uninitialized when inlined; every lane is overwritten.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace npu::kernels {
namespace {

using testing::RoundToHalf;

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// Operands with every kind of value the rounding treats apart.
float Operand(std::mt19937& rng, int64_t i, float scale) {
  std::uniform_real_distribution<float> dist(-scale, scale);
  constexpr float kInf = std::numeric_limits<float>::infinity();
  switch (i % 37) {
    case 3: return std::numeric_limits<float>::quiet_NaN();
    case 5: return i % 2 ? -kInf : kInf;
    case 8: return i % 2 ? -65519.0f : 65519.0f;  // the last magnitude that rounds to 65504
    case 11: return i % 2 ? -65520.0f : 65520.0f;  // the first past it
    case 13: return i % 2 ? -1e5f : 1e5f;
    default: return dist(rng) * (i % 3 == 0 ? 1e-6f : 1.0f);
  }
}

class CubePack : public ::testing::TestWithParam<std::tuple<SimdPath, bool>> {
 protected:
  void SetUp() override {
    if (!CpuCanRun(std::get<0>(GetParam()))) GTEST_SKIP() << "this CPU cannot run the path";
    ForceCubeSimdPath(std::get<0>(GetParam()));
  }
  void TearDown() override { ForceCubeSimdPath(SimdPath::kAuto); }
  bool saturate() const { return std::get<1>(GetParam()); }
};

TEST_P(CubePack, ASliversHoldFp16RoundedValuesKMajor) {
  std::mt19937 rng(9);
  for (ElemType type : {ElemType::kFloat16, ElemType::kFloat32}) {
    for (bool trans : {false, true}) {
      for (int mr : {4, 6, 12, 16}) {
        const int64_t m = 45, k = 29, m0 = 3, mt = 37;
        std::vector<float> f32(m * k), want_at(m * k);
        std::vector<half_bits> f16(m * k);
        for (int64_t i = 0; i < m * k; ++i) {
          f32[i] = Operand(rng, i, 70000.0f);
          // A half operand is used as it is; an fp32 one is rounded in the mode.
          f16[i] = FloatToHalf(RoundToHalf(f32[i]));
          want_at[i] = type == ElemType::kFloat16 ? HalfToFloat(f16[i]) : RoundToHalf(f32[i], saturate());
        }
        const OperandView a{type == ElemType::kFloat16 ? static_cast<const void*>(f16.data()) : f32.data(), type,
                            trans ? m : k, trans};
        std::vector<float> out(mt * k + kCubePackASlack, -1.0f);
        PackCubeA(a, m0, mt, k, mr, saturate(), out.data());
        int64_t s0 = 0, rows = CubeSliverRows(mt, mr, 0);
        for (int64_t i = 0; i < mt; ++i) {
          if (i == s0 + rows) {
            s0 = i;
            rows = CubeSliverRows(mt, mr, s0);
          }
          ASSERT_GE(rows, std::min<int64_t>(mr, mt) / 2) << "a sliver too short for the Cube's FMA latency";
          ASSERT_LE(rows, 16);
          for (int64_t kk = 0; kk < k; ++kk) {
            const int64_t src = trans ? kk * m + (m0 + i) : (m0 + i) * k + kk;
            const float got = out[s0 * k + kk * rows + (i - s0)];
            ASSERT_EQ(Bits(got), Bits(want_at[src]))
                << "mr " << mr << " row " << i << " k " << kk << " of " << f32[src] << (trans ? " trans" : "");
          }
        }
        EXPECT_EQ(s0 + rows, mt);
      }
    }
  }
}

TEST_P(CubePack, BPanelsAreZeroPaddedFractalColumns) {
  std::mt19937 rng(4);
  for (ElemType type : {ElemType::kFloat16, ElemType::kFloat32}) {
    for (bool trans : {false, true}) {
      const int64_t k = 50, n = 41, n0 = 5, nt = 35, k0 = 7, kc = 37, stride = kc * 16 + 32;
      std::vector<float> f32(k * n);
      std::vector<half_bits> f16(k * n), want_at(k * n);
      for (int64_t i = 0; i < k * n; ++i) {
        f32[i] = Operand(rng, i, 2.0f);
        f16[i] = FloatToHalf(RoundToHalf(f32[i]));
        want_at[i] = type == ElemType::kFloat16 ? f16[i] : FloatToHalf(RoundToHalf(f32[i], saturate()));
      }
      const OperandView b{type == ElemType::kFloat16 ? static_cast<const void*>(f16.data()) : f32.data(), type,
                          trans ? k : n, trans};
      std::vector<half_bits> out(3 * stride, 0xffff);
      PackCubeB(b, n0, nt, k0, kc, stride, saturate(), out.data());
      for (int64_t j = 0; j < 48; ++j) {
        for (int64_t kk = 0; kk < kc; ++kk) {
          const half_bits got = out[j / 16 * stride + kk * 16 + j % 16];
          const half_bits want = j < nt ? want_at[trans ? (n0 + j) * k + k0 + kk : (k0 + kk) * n + n0 + j] : 0;
          ASSERT_EQ(got, want) << "col " << j << " k " << kk;
        }
      }
    }
  }
}

TEST_P(CubePack, ConstantBIsPackedInItsMode) {
  // Weights [1e5, NaN, -inf, 3] as one k = 4 column.
  const std::vector<float> w{1e5f, std::numeric_limits<float>::quiet_NaN(),
                             -std::numeric_limits<float>::infinity(), 3.0f};
  const PackedCubeB b = PackedCubeB::Pack({w.data(), ElemType::kFloat32, 1, false}, 4, 1, 1, 0, saturate());
  EXPECT_EQ(b.saturate(), saturate());
  const half_bits* col = b.data();
  if (saturate()) {
    EXPECT_EQ(col[0], 0x7bff);   // 65504
    EXPECT_EQ(col[16], 0x0000);  // NaN -> 0
    EXPECT_EQ(col[32], 0xfbff);  // -65504
  } else {
    EXPECT_EQ(col[0], 0x7c00);             // inf
    EXPECT_EQ(col[16] & 0x7e00, 0x7e00);   // a quiet NaN
    EXPECT_EQ(col[32], 0xfc00);            // -inf
  }
  EXPECT_EQ(col[48], 0x4200);  // 3
}

INSTANTIATE_TEST_SUITE_P(PathsAndModes, CubePack, testing::EveryPathAndMode(), testing::PathAndModeName);

__attribute__((target("avx2,f16c"))) void Round8(const std::vector<float>& xs, bool saturate, float* out) {
  for (size_t i = 0; i < xs.size(); i += 8) _mm256_storeu_ps(out + i, CubeOperand8(_mm256_loadu_ps(&xs[i]), saturate));
}

__attribute__((target("avx512f"))) void Round16(const std::vector<float>& xs, bool saturate, float* out) {
  for (size_t i = 0; i < xs.size(); i += 16) {
    _mm512_storeu_ps(out + i, CubeOperand16(_mm512_loadu_ps(&xs[i]), saturate));
  }
}

// The rounding itself, every form of it, on every fp32 exponent and the
// special values: the scalar, bulk, AVX2 and AVX-512 forms give the bits of
// the float64 definition in both modes.
TEST(CubeOperandRounding, EveryFormGivesTheDefinitionsBits) {
  std::vector<float> xs;
  for (uint32_t e = 0; e < 256; ++e) {
    for (uint32_t m : {0u, 1u, 0x1000u, 0x1001u, 0x2000u, 0x3000u, 0x7fffffu}) {
      for (uint32_t sign : {0u, 0x80000000u}) {
        const uint32_t bits = sign | (e << 23) | m;
        float f;
        std::memcpy(&f, &bits, 4);
        if (!std::isnan(f)) xs.push_back(f);
      }
    }
  }
  for (float f : {65504.0f, 65519.0f, 65520.0f, -65520.0f, 1e5f, -1e5f, std::numeric_limits<float>::quiet_NaN()}) {
    xs.push_back(f);
  }
  while (xs.size() % 16 != 0) xs.push_back(1.0f);
  for (bool saturate : {false, true}) {
    std::vector<half_bits> bulk(xs.size());
    CubeOperandHalves(xs.data(), bulk.data(), xs.size(), saturate);
    std::vector<float> v8(xs.size()), v16(xs.size());
    const CpuFeatures& cpu = HostCpuFeatures();
    if (cpu.avx2 && cpu.f16c) Round8(xs, saturate, v8.data());
    if (cpu.avx512f) Round16(xs, saturate, v16.data());
    for (size_t i = 0; i < xs.size(); ++i) {
      const float want = RoundToHalf(xs[i], saturate);
      const uint32_t want_bits = Bits(want);
      ASSERT_EQ(Bits(CubeOperand(xs[i], saturate)), want_bits) << xs[i] << " saturate " << saturate;
      ASSERT_EQ(Bits(HalfToFloat(bulk[i])), want_bits) << xs[i] << " saturate " << saturate;
      if (cpu.avx2 && cpu.f16c) {
        ASSERT_EQ(Bits(v8[i]), want_bits) << xs[i] << " avx2, saturate " << saturate;
      }
      if (cpu.avx512f) {
        ASSERT_EQ(Bits(v16[i]), want_bits) << xs[i] << " avx512, saturate " << saturate;
      }
    }
  }
}

}  // namespace
}  // namespace npu::kernels
