#include "kernels/cube_dispatch.h"

#include <atomic>

#include "kernels/cpu_features.h"

namespace npu::kernels {
namespace {

std::atomic<SimdPath> g_forced_path{SimdPath::kAuto};

bool CanRun(SimdPath p) {
  const CpuFeatures& f = HostCpuFeatures();
  switch (p) {
    case SimdPath::kAvx512: return f.avx512f && f.fma && f.f16c;
    case SimdPath::kAvx2: return f.avx2 && f.fma && f.f16c;
    default: return true;
  }
}

SimdPath ResolvePath(SimdPath want) {
  if (want != SimdPath::kAuto && CanRun(want)) return want;
  if (want == SimdPath::kPortable) return want;
  if (want != SimdPath::kAvx2 && CanRun(SimdPath::kAvx512)) return SimdPath::kAvx512;
  return CanRun(SimdPath::kAvx2) ? SimdPath::kAvx2 : SimdPath::kPortable;
}

}  // namespace

void ForceCubeSimdPath(SimdPath path) { g_forced_path.store(path); }

SimdPath ActiveCubeSimdPath() { return ResolvePath(g_forced_path.load()); }

const CubeMicroKernelSet& ActiveCubeKernels() {
  switch (ActiveCubeSimdPath()) {
    case SimdPath::kAvx512: return kAvx512CubeKernels;
    case SimdPath::kAvx2: return kAvx2CubeKernels;
    default: return kPortableCubeKernels;
  }
}

}  // namespace npu::kernels
