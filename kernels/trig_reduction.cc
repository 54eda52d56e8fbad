#include "kernels/trig_reduction.h"

#include <bit>
#include <cstdint>

#include "kernels/vector_math_coeffs.h"

namespace npu::kernels {
namespace {

using u128 = unsigned __int128;

// Bits [start, start + 128) of 2/pi after the binary point (bit 0 is the first),
// as a 128-bit integer; bits before the point are 0.
u128 TwoOverPiWindow(int start) {
  const auto word = [](int i) -> u128 { return i >= 0 && i < 4 ? vmath::kTwoOverPiBits[i] : 0; };
  if (start < 0) return ((word(0) << 64) | word(1)) >> -start;
  const int w = start / 64, o = start % 64;
  const u128 hi = (word(w) << 64) | word(w + 1);
  return o == 0 ? hi : (hi << o) | (word(w + 2) >> (64 - o));
}

}  // namespace

double ReduceHalfPi(float x, int* quadrant) {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  const int biased = static_cast<int>((bits >> 23) & 0xff);
  // |x| = mant * 2^e with mant a 24-bit integer.
  const uint64_t mant = (bits & 0x7fffff) | 0x800000;
  const int e = biased - 150;
  // x 2/pi mod 4 = mant * sum_i b_i 2^(e-i): bits with e - i >= 2 only add
  // multiples of 4; the window from i = e - 1 gives the product in units of
  // 2^-126 (two integer bits, 126 fraction bits), the rest is below 2^-100.
  const u128 w = TwoOverPiWindow(e - 2);
  const u128 p = ((mant * (w >> 64)) << 64) + static_cast<u128>(mant) * static_cast<uint64_t>(w);  // mod 2^128
  int q = static_cast<int>(p >> 126);
  u128 frac = p << 2;    // the fraction, in units of 2^-128
  if (frac >> 127) ++q;  // f >= 1/2: round up, f - 1 as two's complement
  const auto signed_frac = static_cast<__int128>(frac);
  const double hi = static_cast<double>(static_cast<int64_t>(signed_frac >> 64));
  const double lo = static_cast<double>(static_cast<uint64_t>(frac));
  const double f = (hi + lo * 0x1p-64) * 0x1p-64;
  int quad = q & 3;
  if (bits >> 31) {  // x < 0: the reduction of |x| negated
    quad = (4 - quad) & 3;
    *quadrant = quad;
    return -f * vmath::kPio2Hi;
  }
  *quadrant = quad;
  return f * vmath::kPio2Hi;
}

}  // namespace npu::kernels
