// What the host CPU can run, detected once. The Cube's SIMD paths are chosen
// from this at run time so one binary runs on AVX2-only and AVX-512 machines.
#pragma once

namespace npu::kernels {

struct CpuFeatures {
  bool avx2 = false;
  bool fma = false;
  bool f16c = false;
  bool avx512f = false;  // with OS support for the zmm state
};

const CpuFeatures& HostCpuFeatures();

}  // namespace npu::kernels
