// IEEE 754 binary16 ("half") conversions, the storage type of the Cube's inputs.
//
// Halves are kept as their raw bit pattern (uint16_t) so that tensors can be
// moved around as bytes; arithmetic always happens in fp32.
#pragma once

#include <cstddef>
#include <cstdint>

namespace npu::kernels {

using half_bits = uint16_t;

inline constexpr half_bits kHalfMaxBits = 0x7bff;  // 65504
inline constexpr float kHalfMax = 65504.0f;

// Exact: every half is representable in fp32.
float HalfToFloat(half_bits h);

// Round to nearest, ties to even; overflow gives +-inf, NaN stays NaN (quiet).
half_bits FloatToHalf(float f);

// As FloatToHalf, but finite values beyond the range and infinities saturate to
// +-65504 and NaN becomes 0: the Ascend 910 "saturation mode".
half_bits FloatToHalfSaturate(float f);

// Bulk conversions on the Vector kernels (F16C / AVX-512 when the CPU has them);
// results equal the scalar ones.
void HalfToFloatN(const half_bits* in, float* out, size_t n);
void FloatToHalfN(const float* in, half_bits* out, size_t n, bool saturate);

// The float-status counts (what sets an NPU's overflow flag): of n fp32
// results, how many overflow fp16 (round beyond +-65504, i.e. become inf or
// saturate) or are inf/NaN; and how many are inf/NaN, for fp32 results.
uint64_t CountHalfOverflow(const float* in, size_t n);
uint64_t CountNonFinite(const float* in, size_t n);

}  // namespace npu::kernels
