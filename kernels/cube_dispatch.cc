#include "kernels/cube_dispatch.h"

#include <atomic>

#include "kernels/cpu_features.h"

namespace npu::kernels {
namespace {

std::atomic<SimdPath> g_forced_path{SimdPath::kAuto};

}  // namespace

void ForceCubeSimdPath(SimdPath path) { g_forced_path.store(path); }

SimdPath ActiveCubeSimdPath() { return ResolveSimdPath(g_forced_path.load()); }

const CubeMicroKernelSet& ActiveCubeKernels() {
  switch (ActiveCubeSimdPath()) {
    case SimdPath::kAvx512: return kAvx512CubeKernels;
    case SimdPath::kAvx2: return kAvx2CubeKernels;
    default: return kPortableCubeKernels;
  }
}

}  // namespace npu::kernels
