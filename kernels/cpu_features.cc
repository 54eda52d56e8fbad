#include "kernels/cpu_features.h"

namespace npu::kernels {

const CpuFeatures& HostCpuFeatures() {
  // libgcc's __builtin_cpu_supports also checks XGETBV, so a feature is only
  // reported when the OS saves the matching register state.
  static const CpuFeatures features = [] {
    __builtin_cpu_init();
    CpuFeatures f;
    f.avx2 = __builtin_cpu_supports("avx2");
    f.fma = __builtin_cpu_supports("fma");
    f.f16c = __builtin_cpu_supports("f16c");
    f.avx512f = __builtin_cpu_supports("avx512f");
    return f;
  }();
  return features;
}

bool CpuCanRun(SimdPath path) {
  const CpuFeatures& f = HostCpuFeatures();
  switch (path) {
    case SimdPath::kAvx512: return f.avx512f && f.avx2 && f.fma && f.f16c;
    case SimdPath::kAvx2: return f.avx2 && f.fma && f.f16c;
    default: return true;
  }
}

SimdPath ResolveSimdPath(SimdPath want) {
  if (want != SimdPath::kAuto && CpuCanRun(want)) return want;
  if (want != SimdPath::kAvx2 && CpuCanRun(SimdPath::kAvx512)) return SimdPath::kAvx512;
  return CpuCanRun(SimdPath::kAvx2) ? SimdPath::kAvx2 : SimdPath::kPortable;
}

const char* SimdPathName(SimdPath path) {
  switch (path) {
    case SimdPath::kAvx512: return "avx512";
    case SimdPath::kAvx2: return "avx2";
    case SimdPath::kPortable: return "portable";
    default: return "auto";
  }
}

}  // namespace npu::kernels
