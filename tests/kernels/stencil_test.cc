// The Vector stencil (kernels/stencil.h) on every SIMD path the CPU can run:
// PadPlane's phase split and the stencil kernel against a scalar model of the
// contract (per output: the init, then one fused multiply-add, max or add per
// (channel, ky, kx) in that order, padded taps reading the pad value, one
// rounding), bit for bit, and the weighted sums against float64 within the
// bound of fp32 accumulation.
#include "kernels/stencil.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/fp16.h"
#include "kernels/vector_kernels.h"
#include "tests/kernels/vector_test_support.h"

namespace npu::kernels {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

struct Case {
  int64_t h, w, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
  size_t channels;
};

StencilShape ShapeOf(const Case& c) {
  StencilShape s;
  s.h = c.h, s.w = c.w, s.kh = c.kh, s.kw = c.kw, s.sh = c.sh, s.sw = c.sw, s.dh = c.dh, s.dw = c.dw;
  s.pt = c.pt, s.pl = c.pl;
  s.oh = (c.h + c.pt + c.pb - (c.kh - 1) * c.dh - 1) / c.sh + 1;
  s.ow = (c.w + c.pl + c.pr - (c.kw - 1) * c.dw - 1) / c.sw + 1;
  return s;
}

std::string Name(const Case& c) {
  std::ostringstream o;
  o << c.channels << "x" << c.h << "x" << c.w << " k" << c.kh << "x" << c.kw << " s" << c.sh << "x" << c.sw << " d"
    << c.dh << "x" << c.dw << " p" << c.pt << "," << c.pl << "," << c.pb << "," << c.pr;
  return o.str();
}

// Geometries of each of the kernel's ways (outputs along a row, tap by tap or
// in row blocks for 3x3 and 5x5 windows with rows left over; narrow rows
// read as one long row), strides 1 to 3 (the phase split with a vectorised
// pass for 2), dilations, padding on some sides only, kernels larger than the
// stride and smaller (phases no tap reads), rows whose vectors end mid-row.
const Case kCases[] = {
    {112, 112, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},  // MobileNetV2's layers
    {56, 56, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1},   {7, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2},
    {14, 14, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1},   {13, 37, 3, 3, 2, 2, 1, 1, 0, 1, 1, 0, 1},
    {9, 40, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 1},    {10, 10, 5, 5, 3, 3, 1, 1, 2, 2, 2, 2, 3},
    {9, 9, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 4},     {15, 17, 3, 3, 2, 2, 2, 2, 1, 2, 0, 1, 2},
    {11, 19, 2, 3, 3, 2, 1, 3, 1, 0, 0, 2, 1},   {8, 33, 1, 1, 2, 3, 1, 1, 0, 0, 0, 0, 1},
    {5, 70, 3, 1, 1, 2, 1, 1, 1, 0, 1, 0, 8},    {28, 28, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 8},
    {3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},     {1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1},
    {6, 31, 7, 7, 2, 2, 1, 1, 3, 3, 3, 3, 1},    {20, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {16, 40, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0, 1},   {21, 37, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2, 2},
};

// The contract, one output at a time.
float Reference(StencilOp op, const StencilShape& s, const std::vector<float>& x, size_t channels,
                const std::vector<float>& w, float init, float pad, const std::vector<float>& divisor, int64_t oy,
                int64_t ox) {
  float acc = init;
  for (size_t c = 0; c < channels; ++c) {
    for (int64_t ky = 0; ky < s.kh; ++ky) {
      for (int64_t kx = 0; kx < s.kw; ++kx) {
        const int64_t iy = oy * s.sh - s.pt + ky * s.dh, ix = ox * s.sw - s.pl + kx * s.dw;
        const float v = iy >= 0 && iy < s.h && ix >= 0 && ix < s.w ? x[(c * s.h + iy) * s.w + ix] : pad;
        if (op == StencilOp::kWeighted) acc = std::fma(w[(c * s.kh + ky) * s.kw + kx], v, acc);
        if (op == StencilOp::kMax) acc = (v > acc || std::isnan(v)) ? v : acc;
        if (op == StencilOp::kSum) acc = acc + v;
      }
    }
  }
  return divisor.empty() ? acc : acc / divisor[oy * s.ow + ox];
}

uint32_t Bits(float v) { return std::isnan(v) ? 0x7fc00000u : std::bit_cast<uint32_t>(v); }

TEST(Stencil, EveryPathGivesTheContractsBits) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> d(-2, 2);
  for (const Case& c : kCases) {
    const StencilShape s = ShapeOf(c);
    ASSERT_TRUE(PaddingIsCheap(s)) << Name(c);
    std::vector<float> x(c.channels * c.h * c.w), w(c.channels * c.kh * c.kw);
    for (float& v : x) v = d(rng);
    for (float& v : w) v = d(rng);
    x[x.size() / 2] = std::numeric_limits<float>::quiet_NaN();  // max: a NaN wins its windows
    std::vector<half_bits> xh(x.size());
    for (size_t i = 0; i < x.size(); ++i) xh[i] = FloatToHalf(x[i]);
    std::vector<float> divisor(s.oh * s.ow);
    for (float& v : divisor) v = static_cast<float>(1 + rng() % 9);
    for (StencilOp op : {StencilOp::kWeighted, StencilOp::kMax, StencilOp::kSum}) {
      const size_t channels = op == StencilOp::kWeighted ? c.channels : 1;
      const float pad = op == StencilOp::kMax ? -kInf : 0.0f, init = op == StencilOp::kWeighted ? 0.75f : pad;
      const std::vector<float> div = op == StencilOp::kSum ? divisor : std::vector<float>{};
      for (bool fp16_in : {false, true}) {
        std::vector<float> xin(x.size());
        for (size_t i = 0; i < x.size(); ++i) xin[i] = fp16_in ? HalfToFloat(xh[i]) : x[i];
        std::vector<float> want(s.oh * s.ow);
        for (int64_t oy = 0; oy < s.oh; ++oy) {
          for (int64_t ox = 0; ox < s.ow; ++ox) {
            want[oy * s.ow + ox] = Reference(op, s, xin, channels, w, init, pad, div, oy, ox);
          }
        }
        for (SimdPath p : RunnablePaths()) {
          const VectorKernelSet& k = VectorKernelsFor(p);
          const StencilPlan plan = PlanStencil(s, channels);
          std::vector<float> padded(channels * s.PlaneFloats(), 12345.0f);
          for (size_t ch = 0; ch < channels; ++ch) {
            const void* plane = fp16_in ? static_cast<const void*>(xh.data() + ch * c.h * c.w)
                                        : static_cast<const void*>(x.data() + ch * c.h * c.w);
            k.pad_plane(plan, plane, fp16_in, pad, padded.data() + ch * s.PlaneFloats());
          }
          const std::string at = Name(c) + " op " + std::to_string(static_cast<int>(op)) +
                                 (fp16_in ? " fp16 in " : " fp32 in ") + SimdPathName(p);
          // fp32 out (with one guard element), then fp16 out.
          std::vector<float> y(want.size() + 1, 7.0f);
          k.stencil(op, plan, padded.data(), w.data(), init, div.empty() ? nullptr : div.data(), F32Dst(y.data()),
                    false);
          EXPECT_EQ(y.back(), 7.0f) << at << ": wrote past the plane";
          std::vector<half_bits> yh(want.size() + 1, 0xabcd);
          k.stencil(op, plan, padded.data(), w.data(), init, div.empty() ? nullptr : div.data(), F16Dst(yh.data()),
                    false);
          EXPECT_EQ(yh.back(), 0xabcd) << at << ": wrote past the plane (fp16)";
          int failures = 0;
          for (size_t i = 0; i < want.size() && failures < 5; ++i) {
            const half_bits want_h = FloatToHalf(want[i]);
            const bool half_ok = std::isnan(want[i]) ? std::isnan(HalfToFloat(yh[i])) : yh[i] == want_h;
            if (Bits(y[i]) != Bits(want[i]) || !half_ok) {
              ADD_FAILURE() << at << ": output " << i / s.ow << "," << i % s.ow << " is " << y[i] << " / "
                            << HalfToFloat(yh[i]) << ", the contract gives " << want[i];
              ++failures;
            }
          }
        }
      }
    }
  }
}

// The weighted sum against float64: fp32 accumulation of T terms stays within
// gamma_T (sum of |terms| + |init|), gamma_T = T u / (1 - T u), u = 2^-24.
TEST(Stencil, WeightedSumsAreWithinFp32AccumulationOfFloat64) {
  std::mt19937 rng(12);
  std::uniform_real_distribution<float> d(-1, 1);
  const Case c = {23, 29, 3, 3, 2, 1, 1, 2, 1, 2, 1, 2, 8};  // a grouped conv's 8 input channels
  const StencilShape s = ShapeOf(c);
  std::vector<float> x(c.channels * c.h * c.w), w(c.channels * c.kh * c.kw);
  for (float& v : x) v = d(rng);
  for (float& v : w) v = d(rng);
  const float init = 0.3f;
  const StencilPlan plan = PlanStencil(s, c.channels);
  std::vector<float> padded(c.channels * s.PlaneFloats());
  for (size_t ch = 0; ch < c.channels; ++ch) {
    PadPlane(plan, x.data() + ch * c.h * c.w, false, 0.0f, padded.data() + ch * s.PlaneFloats());
  }
  std::vector<float> y(s.oh * s.ow);
  VectorKernels().stencil(StencilOp::kWeighted, plan, padded.data(), w.data(), init, nullptr, F32Dst(y.data()), false);
  const double taps = static_cast<double>(w.size() + 1), u = std::ldexp(1.0, -24), gamma = taps * u / (1 - taps * u);
  for (int64_t oy = 0; oy < s.oh; ++oy) {
    for (int64_t ox = 0; ox < s.ow; ++ox) {
      double sum = init, abs_sum = std::fabs(init);
      for (size_t ch = 0; ch < c.channels; ++ch) {
        for (int64_t ky = 0; ky < s.kh; ++ky) {
          for (int64_t kx = 0; kx < s.kw; ++kx) {
            const int64_t iy = oy * s.sh - s.pt + ky * s.dh, ix = ox * s.sw - s.pl + kx * s.dw;
            if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w) continue;
            const double t = static_cast<double>(w[(ch * s.kh + ky) * s.kw + kx]) * x[(ch * s.h + iy) * s.w + ix];
            sum += t;
            abs_sum += std::fabs(t);
          }
        }
      }
      ASSERT_LE(std::fabs(y[oy * s.ow + ox] - sum), gamma * abs_sum) << oy << "," << ox;
    }
  }
}

// Phases that no tap reads are never written (strides larger than the kernel):
// padding stays proportional to what the stencil reads.
TEST(Stencil, PadPlaneWritesOnlyThePhasesTapsRead) {
  const StencilShape s = ShapeOf({8, 33, 1, 1, 2, 3, 1, 1, 0, 0, 0, 0, 1});
  std::vector<float> x(8 * 33, 1.0f), padded(s.PlaneFloats(), -5.0f);
  for (SimdPath p : RunnablePaths()) {
    VectorKernelsFor(p).pad_plane(PlanStencil(s, 1), x.data(), false, 0.0f, padded.data());
    for (int64_t i = 0; i < s.PlaneFloats(); ++i) {
      ASSERT_EQ(padded[i] == -5.0f, i >= s.PhaseFloats()) << SimdPathName(p) << " element " << i;
    }
  }
}

}  // namespace
}  // namespace npu::kernels
