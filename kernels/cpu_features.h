// What the host CPU can run, detected once, and the SIMD paths built from it.
// The Cube's and the Vector unit's kernels are chosen from this at run time, so
// one binary runs on AVX2-only and AVX-512 machines.
#pragma once

namespace npu::kernels {

struct CpuFeatures {
  bool avx2 = false;
  bool fma = false;
  bool f16c = false;
  bool avx512f = false;  // with OS support for the zmm state
};

const CpuFeatures& HostCpuFeatures();

// A family of kernels built for one instruction set: AVX-512F (+FMA, F16C),
// AVX2 + FMA + F16C, or plain C++. Every path computes bit for bit the same.
enum class SimdPath { kAuto, kAvx512, kAvx2, kPortable };

// Whether this CPU can run `path` (kAuto and kPortable: always).
bool CpuCanRun(SimdPath path);

// The path that runs for a request: `want` when the CPU can run it, else the
// best one it has (kAuto: the best one).
SimdPath ResolveSimdPath(SimdPath want);

const char* SimdPathName(SimdPath path);

}  // namespace npu::kernels
