// The Cube on AVX-512F + F16C (built with those flags; dispatched at run time).
// 12 rows x 32 columns (two fractals): 24 zmm accumulators, 2 for B, 1 broadcast
// (of 32): enough independent FMA chains to cover 2 pipes x 4 cycles of latency.
#include <immintrin.h>

// GCC 12's _mm512_cvtph_ps starts from an undefined register and trips
// -Wmaybe-uninitialized when inlined; the value is fully overwritten.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <cstdint>
#include <utility>

#include "kernels/cube_microkernel.h"

namespace npu::kernels {
namespace {

struct Isa {
  using Vec = __m512;
  static constexpr int kLanes = 16;
  static Vec Zero() { return _mm512_setzero_ps(); }
  static Vec Load(const float* p) { return _mm512_loadu_ps(p); }
  static void Store(float* p, Vec v) { _mm512_storeu_ps(p, v); }
  static Vec LoadHalves(const half_bits* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static Vec Broadcast(const float* p) { return _mm512_set1_ps(*p); }
  static Vec Fma(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
};

#include "kernels/cube_microkernel_body.h"

}  // namespace

constexpr CubeMicroKernelSet kAvx512CubeKernels = MakeCubeKernelSet<12, 2>();

}  // namespace npu::kernels
