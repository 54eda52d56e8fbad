// MTE1 packing layouts, checked element by element for every sliver height the
// SIMD paths use (including AVX-512's 12 rows, which this test reaches on any CPU
// because packing does not depend on the Cube path).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/cube_pack.h"
#include "kernels/fp16.h"

namespace npu::kernels {
namespace {

TEST(CubePack, ASliversHoldFp16RoundedValuesKMajor) {
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> dist(-70000.0f, 70000.0f);  // includes values that overflow fp16
  for (ElemType type : {ElemType::kFloat16, ElemType::kFloat32}) {
    for (bool trans : {false, true}) {
      for (int mr : {4, 6, 12, 16}) {
        const int64_t m = 45, k = 29, m0 = 3, mt = 37;
        std::vector<float> f32(m * k);
        std::vector<half_bits> f16(m * k);
        for (int64_t i = 0; i < m * k; ++i) {
          f32[i] = dist(rng) * (i % 3 == 0 ? 1e-6f : 1.0f);
          f16[i] = FloatToHalf(f32[i]);
        }
        const OperandView a{type == ElemType::kFloat16 ? static_cast<const void*>(f16.data()) : f32.data(), type,
                            trans ? m : k, trans};
        std::vector<float> out(mt * k + kCubePackASlack, -1.0f);
        PackCubeA(a, m0, mt, k, mr, out.data());
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
            const float want = HalfToFloat(f16[src]);
            const float got = out[s0 * k + kk * rows + (i - s0)];
            ASSERT_EQ(std::memcmp(&want, &got, 4), 0) << "mr " << mr << " row " << i << " k " << kk;
          }
        }
        EXPECT_EQ(s0 + rows, mt);
      }
    }
  }
}

TEST(CubePack, BPanelsAreZeroPaddedFractalColumns) {
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  for (ElemType type : {ElemType::kFloat16, ElemType::kFloat32}) {
    for (bool trans : {false, true}) {
      const int64_t k = 50, n = 41, n0 = 5, nt = 35, k0 = 7, kc = 37, stride = kc * 16 + 32;
      std::vector<float> f32(k * n);
      std::vector<half_bits> f16(k * n);
      for (int64_t i = 0; i < k * n; ++i) {
        f32[i] = dist(rng);
        f16[i] = FloatToHalf(f32[i]);
      }
      const OperandView b{type == ElemType::kFloat16 ? static_cast<const void*>(f16.data()) : f32.data(), type,
                          trans ? k : n, trans};
      std::vector<half_bits> out(3 * stride, 0xffff);
      PackCubeB(b, n0, nt, k0, kc, stride, out.data());
      for (int64_t j = 0; j < 48; ++j) {
        for (int64_t kk = 0; kk < kc; ++kk) {
          const half_bits got = out[j / 16 * stride + kk * 16 + j % 16];
          const half_bits want = j < nt ? f16[trans ? (n0 + j) * k + k0 + kk : (k0 + kk) * n + n0 + j] : 0;
          ASSERT_EQ(got, want) << "col " << j << " k " << kk;
        }
      }
    }
  }
}

}  // namespace
}  // namespace npu::kernels
