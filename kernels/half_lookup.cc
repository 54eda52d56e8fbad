#include "kernels/half_lookup.h"

namespace npu::kernels {

void LookUpHalves(const half_bits* table, const half_bits* in, half_bits* out, size_t n) {
  size_t i = 0;
  // Four loads before four stores: independent, and correct when out == in.
  for (; i + 4 <= n; i += 4) {
    const half_bits a = table[in[i]], b = table[in[i + 1]], c = table[in[i + 2]], d = table[in[i + 3]];
    out[i] = a, out[i + 1] = b, out[i + 2] = c, out[i + 3] = d;
  }
  for (; i < n; ++i) out[i] = table[in[i]];
}

uint64_t SaturateHalvesScalar(half_bits* p, size_t n, bool saturate) {
  uint64_t over = 0;
  for (size_t i = 0; i < n; ++i) {
    const half_bits h = p[i];
    if ((h & 0x7c00) != 0x7c00) continue;
    ++over;
    if (saturate) p[i] = (h & 0x3ff) != 0 ? half_bits{0} : static_cast<half_bits>((h & 0x8000) | kHalfMaxBits);
  }
  return over;
}

}  // namespace npu::kernels
