// fp16 conversions checked over all 65,536 halves against an analytical
// reference (sign * 2^(e-15) * (1 + m/1024), computed in double) and, for
// rounding, against a nearest-value search over every finite half.
#include "kernels/fp16.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace npu::kernels {
namespace {

double ReferenceHalfValue(uint16_t h) {
  const int sign = (h >> 15) ? -1 : 1;
  const int e = (h >> 10) & 0x1f;
  const int m = h & 0x3ff;
  if (e == 0) return sign * std::ldexp(m / 1024.0, -14);
  if (e == 31) return m ? std::nan("") : sign * INFINITY;
  return sign * std::ldexp(1.0 + m / 1024.0, e - 15);
}

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// Every finite non-negative half, ascending (bit order is value order).
const std::vector<std::pair<double, uint16_t>>& PositiveHalves() {
  static const auto* halves = [] {
    auto* v = new std::vector<std::pair<double, uint16_t>>();
    for (uint32_t h = 0; h <= 0x7bff; ++h) v->push_back({ReferenceHalfValue(h), static_cast<uint16_t>(h)});
    return v;
  }();
  return *halves;
}

// Round to nearest, ties to even, by searching the list of halves.
uint16_t ReferenceRound(float f) {
  if (std::isnan(f)) return 0x7e00;
  const uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  const double a = std::fabs(static_cast<double>(f));
  const double max_half = 65504.0, overflow_tie = 65520.0;  // 65504 + half an ulp (ulp 32)
  if (a >= overflow_tie) return sign | 0x7c00;
  if (a >= max_half) return sign | 0x7bff;
  const auto& hs = PositiveHalves();
  auto it = std::lower_bound(hs.begin(), hs.end(), std::make_pair(a, uint16_t{0}));
  if (it != hs.end() && it->first == a) return sign | it->second;
  const auto hi = *it, lo = *(it - 1);
  const double dlo = a - lo.first, dhi = hi.first - a;
  if (dlo < dhi) return sign | lo.second;
  if (dhi < dlo) return sign | hi.second;
  return sign | ((lo.second & 1) ? hi.second : lo.second);
}

TEST(Fp16, EveryHalfWidensExactly) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const double want = ReferenceHalfValue(static_cast<uint16_t>(h));
    const float got = HalfToFloat(static_cast<uint16_t>(h));
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << std::hex << h;
      continue;
    }
    ASSERT_EQ(static_cast<double>(got), want) << "half 0x" << std::hex << h;
    ASSERT_EQ(std::signbit(got), (h & 0x8000) != 0) << std::hex << h;
  }
}

TEST(Fp16, EveryHalfRoundTrips) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const uint16_t back = FloatToHalf(HalfToFloat(static_cast<uint16_t>(h)));
    const bool nan = (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
    if (nan) {
      EXPECT_EQ(back & 0x7c00, 0x7c00);
      EXPECT_NE(back & 0x3ff, 0) << std::hex << h;
    } else {
      ASSERT_EQ(back, h) << "half 0x" << std::hex << h;
    }
  }
}

// Midpoints between neighbouring halves (ties), and one fp32 ulp either side.
TEST(Fp16, RoundsTiesToEvenAndNeighboursToNearest) {
  const auto& hs = PositiveHalves();
  for (size_t i = 0; i + 1 < hs.size(); ++i) {
    const double mid = (hs[i].first + hs[i + 1].first) / 2;  // exact in fp32: halves have 11 bits
    const float m = static_cast<float>(mid);
    ASSERT_EQ(static_cast<double>(m), mid);
    for (float f : {m, std::nextafter(m, 0.0f), std::nextafter(m, INFINITY)}) {
      ASSERT_EQ(FloatToHalf(f), ReferenceRound(f)) << "f=" << f;
      ASSERT_EQ(FloatToHalf(-f), ReferenceRound(-f)) << "f=" << -f;
    }
  }
}

TEST(Fp16, RandomFloatsAcrossTheRange) {
  std::mt19937 rng(1234);
  std::uniform_int_distribution<uint32_t> bits(0, 0xffffffffu);
  for (int i = 0; i < 200000; ++i) {
    uint32_t u = bits(rng);
    // Bias exponents toward the half range so most cases are interesting.
    if (i % 2) u = (u & 0x807fffffu) | ((100 + u % 60) << 23);
    float f;
    std::memcpy(&f, &u, 4);
    if (std::isnan(f)) continue;
    ASSERT_EQ(FloatToHalf(f), ReferenceRound(f)) << "bits 0x" << std::hex << u;
  }
}

TEST(Fp16, OverflowInfinityAndNan) {
  EXPECT_EQ(FloatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(FloatToHalf(65519.996f), 0x7bff);
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7c00);  // the tie rounds to even: up, to infinity
  EXPECT_EQ(FloatToHalf(-1e10f), 0xfc00);
  EXPECT_EQ(FloatToHalf(INFINITY), 0x7c00);
  EXPECT_EQ(FloatToHalf(-INFINITY), 0xfc00);
  const uint16_t nan = FloatToHalf(std::nanf(""));
  EXPECT_EQ(nan & 0x7c00, 0x7c00);
  EXPECT_NE(nan & 0x3ff, 0);
  // Smallest subnormal 2^-24; half of it ties to even (zero); a bit more rounds up.
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -25)), 0x0000);
  EXPECT_EQ(FloatToHalf(std::nextafter(std::ldexp(1.0f, -25), 1.0f)), 0x0001);
  EXPECT_EQ(FloatToHalf(-0.0f), 0x8000);
}

TEST(Fp16, SaturationMode) {
  EXPECT_EQ(FloatToHalfSaturate(1e10f), 0x7bff);
  EXPECT_EQ(FloatToHalfSaturate(-1e10f), 0xfbff);
  EXPECT_EQ(FloatToHalfSaturate(INFINITY), 0x7bff);
  EXPECT_EQ(FloatToHalfSaturate(-INFINITY), 0xfbff);
  EXPECT_EQ(FloatToHalfSaturate(std::nanf("")), 0x0000);
  EXPECT_EQ(FloatToHalfSaturate(1.5f), FloatToHalf(1.5f));
}

TEST(Fp16, BulkConversionsMatchScalar) {
  std::vector<uint16_t> all(65536);
  for (uint32_t h = 0; h < 65536; ++h) all[h] = static_cast<uint16_t>(h);
  std::vector<float> widened(all.size());
  HalfToFloatN(all.data(), widened.data(), all.size());
  for (uint32_t h = 0; h < 65536; ++h) {
    const float want = HalfToFloat(all[h]);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(widened[h]));
    } else {
      ASSERT_EQ(Bits(widened[h]), Bits(want)) << std::hex << h;
    }
  }
  std::mt19937 rng(99);
  std::uniform_real_distribution<float> dist(-70000.0f, 70000.0f);
  std::vector<float> floats(10007);
  for (auto& f : floats) f = dist(rng) * (rng() % 3 == 0 ? 1e-6f : 1.0f);
  for (bool saturate : {false, true}) {
    std::vector<uint16_t> out(floats.size());
    FloatToHalfN(floats.data(), out.data(), floats.size(), saturate);
    for (size_t i = 0; i < floats.size(); ++i) {
      ASSERT_EQ(out[i], saturate ? FloatToHalfSaturate(floats[i]) : FloatToHalf(floats[i])) << floats[i];
    }
  }
}

}  // namespace
}  // namespace npu::kernels
