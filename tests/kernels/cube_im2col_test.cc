// The convolution's A operand, packed straight from the input planes
// (kernels/cube_im2col.h), against its definition: row m is output pixel m,
// column (ci, kz, ky, kx) is input[ci][oz*sd - pf + kz*dd][oy*sh - pt +
// ky*dh][ox*sw - pl + kx*dw] rounded to fp16 in the float mode (by the float64
// formula of half_reference.h, not our converter), or 0 in the padding. Bit
// for bit, over random 2-D and 3-D geometries (strides 1 to 3, dilations,
// padding, several images, 1x1 flat runs), values past fp16's range, infinities and NaNs, every sliver
// height, both float modes and each SIMD path this CPU can run (AVX-512's
// masked packer, AVX2's, the portable one: forced with ForceCubeSimdPath).
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
#include "kernels/cube_im2col.h"
#include "kernels/cube_pack.h"
#include "kernels/fp16.h"
#include "tests/kernels/half_reference.h"

namespace npu::kernels {
namespace {

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

using testing::RoundToHalf;

class CubeIm2Col : public ::testing::TestWithParam<std::tuple<SimdPath, bool>> {
 protected:
  void SetUp() override { ForceCubeSimdPath(std::get<0>(GetParam())); }
  void TearDown() override { ForceCubeSimdPath(SimdPath::kAuto); }
};

TEST_P(CubeIm2Col, PackedSliversAreTheFp16RoundedInputWindows) {
  const bool saturate = std::get<1>(GetParam());
  if (!CpuCanRun(std::get<0>(GetParam()))) GTEST_SKIP() << "this CPU cannot run the path";
  std::mt19937 rng(17);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  std::uniform_real_distribution<float> value(-70000.0f, 70000.0f);  // some beyond fp16: they round to inf
  int cases = 0;
  for (int trial = 0; trial < 400; ++trial) {
    Im2ColGeometry g;
    const bool flat = trial % 8 == 0, volumetric = trial % 3 == 1;
    g.channels = pick(1, 5);
    if (volumetric) {
      g.d = pick(1, 5);
      g.kd = flat ? 1 : pick(1, 3);
      g.sd = flat ? 1 : pick(1, 2);
      g.dd = flat ? 1 : pick(1, 2);
      g.pf = flat ? 0 : pick(0, 1);
    }
    g.h = pick(1, 14);
    g.w = pick(1, 40);
    g.kh = flat ? 1 : pick(1, 4);
    g.kw = flat ? 1 : pick(1, 4);
    g.sh = flat ? 1 : pick(1, 3);
    g.sw = flat ? 1 : pick(1, 3);
    g.dh = flat ? 1 : pick(1, 2);
    g.dw = flat ? 1 : pick(1, 2);
    g.pt = flat ? 0 : pick(0, 2);
    g.pl = flat ? 0 : pick(0, 2);
    const int64_t span_h = g.dh * (g.kh - 1) + 1, span_w = g.dw * (g.kw - 1) + 1, span_d = g.dd * (g.kd - 1) + 1;
    if (g.h + 2 * g.pt < span_h || g.w + 2 * g.pl < span_w || g.d + 2 * g.pf < span_d) continue;
    g.od = (g.d + 2 * g.pf - span_d) / g.sd + 1;
    g.oh = (g.h + 2 * g.pt - span_h) / g.sh + 1;
    g.ow = (g.w + 2 * g.pl - span_w) / g.sw + 1;
    const int64_t images = pick(1, 3);
    g.image_stride = g.channels * g.volume();
    g.group_stride = 0;
    const int64_t m = images * g.pixels(), k = g.taps();
    for (ElemType type : {ElemType::kFloat32, ElemType::kFloat16}) {
      std::vector<float> f32(images * g.image_stride);
      std::vector<half_bits> f16(f32.size());
      for (size_t i = 0; i < f32.size(); ++i) {
        f32[i] = i % 23 == 4    ? std::numeric_limits<float>::quiet_NaN()
                 : i % 29 == 6  ? (i % 2 ? -1.0f : 1.0f) * std::numeric_limits<float>::infinity()
                 : i % 31 == 7  ? (i % 2 ? -65519.0f : 65520.0f)  // the last that rounds to 65504, the first past it
                                : value(rng) * (i % 3 == 0 ? 1e-6f : 1.0f);
        f16[i] = FloatToHalf(RoundToHalf(f32[i], saturate));
      }
      const Im2ColA a(type == ElemType::kFloat32 ? static_cast<const void*>(f32.data()) : f16.data(), type, g);
      const int mr = pick(0, 1) == 0 ? 12 : 6;
      const int64_t m0 = pick(0, static_cast<int>(m - 1)), mt = pick(1, static_cast<int>(m - m0));
      std::vector<float> out(mt * k + kCubePackASlack, -1.0f);
      a.Pack(/*group=*/0, m0, mt, k, mr, saturate, out.data());
      int64_t s0 = 0, rows = CubeSliverRows(mt, mr, 0);
      for (int64_t r = 0; r < mt; ++r) {
        if (r == s0 + rows) {
          s0 = r;
          rows = CubeSliverRows(mt, mr, s0);
        }
        const int64_t pixel = m0 + r, image = pixel / g.pixels(), oz = pixel % g.pixels() / (g.oh * g.ow),
                      oy = pixel / g.ow % g.oh, ox = pixel % g.ow;
        for (int64_t ci = 0; ci < g.channels; ++ci) {
          for (int64_t kz = 0; kz < g.kd; ++kz) {
            for (int64_t ky = 0; ky < g.kh; ++ky) {
              for (int64_t kx = 0; kx < g.kw; ++kx) {
                const int64_t iz = oz * g.sd - g.pf + kz * g.dd, iy = oy * g.sh - g.pt + ky * g.dh,
                              ix = ox * g.sw - g.pl + kx * g.dw;
                const bool inside = iz >= 0 && iz < g.d && iy >= 0 && iy < g.h && ix >= 0 && ix < g.w;
                const float x = inside ? f32[image * g.image_stride + ((ci * g.d + iz) * g.h + iy) * g.w + ix] : 0.0f;
                const float want = RoundToHalf(x, saturate);
                const int64_t kk = ((ci * g.kd + kz) * g.kh + ky) * g.kw + kx;
                const float got = out[s0 * k + kk * rows + (r - s0)];
                ASSERT_EQ(Bits(got), Bits(want))
                    << "trial " << trial << (type == ElemType::kFloat32 ? " fp32" : " fp16") << " pixel " << pixel
                    << " tap (" << ci << "," << kz << "," << ky << "," << kx << ") stride " << g.sd << "x" << g.sh
                    << "x" << g.sw << " dilation " << g.dd << "x" << g.dh << "x" << g.dw << " pad " << g.pf << ","
                    << g.pt << "," << g.pl << " input " << g.d << "x" << g.h << "x" << g.w;
              }
            }
          }
        }
      }
      ++cases;
    }
  }
  EXPECT_GT(cases, 500);
}

INSTANTIATE_TEST_SUITE_P(PathsAndModes, CubeIm2Col, testing::EveryPathAndMode(), testing::PathAndModeName);

}  // namespace
}  // namespace npu::kernels
