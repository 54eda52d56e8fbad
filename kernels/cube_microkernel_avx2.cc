// The Cube on AVX2 + FMA + F16C (built with those flags; dispatched at run time).
// 6 rows x 16 columns: 12 ymm accumulators, 2 for B, 1 broadcast (of 16).
#include <immintrin.h>

#include <cstdint>
#include <utility>

#include "kernels/cube_microkernel.h"

namespace npu::kernels {
namespace {

struct Isa {
  using Vec = __m256;
  static constexpr int kLanes = 8;
  static Vec Zero() { return _mm256_setzero_ps(); }
  static Vec Load(const float* p) { return _mm256_loadu_ps(p); }
  static void Store(float* p, Vec v) { _mm256_storeu_ps(p, v); }
  static Vec LoadHalves(const half_bits* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static Vec Broadcast(const float* p) { return _mm256_broadcast_ss(p); }
  static Vec Fma(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
};

#include "kernels/cube_microkernel_body.h"

}  // namespace

constexpr CubeMicroKernelSet kAvx2CubeKernels = MakeCubeKernelSet<6, 1>();

}  // namespace npu::kernels
