// Looking fp16 results up in a 65,536-entry table of halves (the Vector kernels'
// fp16 transcendentals, vector_map_body.h). Integer work only, so every SIMD
// path gives the same bits.
//
// The lookup is scalar on every path: on the CPUs measured a 32-bit gather
// (vpgatherdd) is slower than four independent 16-bit loads (AMD Zen 4: 2.9
// Gelem/s for the AVX-512 gather, 1.8 for the AVX2 one, 5.9 for the loads).
// Saturation and the overflow count then run over the output with SIMD while it
// is in L1 (LookUpHalves calls it per chunk).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/fp16.h"

namespace npu::kernels {

// out[i] = table[in[i]] for i < n (out may equal in).
void LookUpHalves(const half_bits* table, const half_bits* in, half_bits* out, size_t n);

// Counts the +-inf and NaN halves of p[0, n), as a store counts overflows; with
// `saturate` makes them what a saturating store writes (+-inf -> +-65504,
// NaN -> 0). The scalar one is the portable path and the others' tail; the
// AVX2 one (built with -mavx2, half_lookup_avx2.cc) serves the AVX2 and the
// AVX-512 kernels (AVX-512F has no 16-bit compares).
uint64_t SaturateHalvesScalar(half_bits* p, size_t n, bool saturate);
uint64_t SaturateHalvesAvx2(half_bits* p, size_t n, bool saturate);

}  // namespace npu::kernels
