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

}  // namespace npu::kernels
