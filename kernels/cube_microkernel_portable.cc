// The Cube in plain C++, for CPUs without AVX2/FMA/F16C and as the reference the
// SIMD paths must match bit for bit: std::fma rounds once, exactly like vfmadd.
#include <cmath>
#include <cstdint>
#include <utility>

#include "kernels/cube_microkernel.h"

namespace npu::kernels {
namespace {

struct Isa {
  using Vec = float;
  static constexpr int kLanes = 1;
  static Vec Zero() { return 0.0f; }
  static Vec Load(const float* p) { return *p; }
  static void Store(float* p, Vec v) { *p = v; }
  static Vec LoadHalves(const half_bits* p) { return HalfToFloat(*p); }
  static Vec Broadcast(const float* p) { return *p; }
  static Vec Fma(Vec a, Vec b, Vec c) { return std::fma(a, b, c); }
};

#include "kernels/cube_microkernel_body.h"

}  // namespace

// Two fractal columns per call, like the AVX-512 set, so that the two-column path of
// the tile driver is exercised (and tested) on CPUs without AVX-512 as well.
constexpr CubeMicroKernelSet kPortableCubeKernels = MakeCubeKernelSet<4, 2>();

}  // namespace npu::kernels
