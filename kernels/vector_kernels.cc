// Which Vector kernel set runs: the best path the CPU has, unless forced.
#include "kernels/vector_kernels.h"

#include <atomic>

#include "kernels/vector_kernel_sets.h"

namespace npu::kernels {
namespace {
std::atomic<const VectorKernelSet*> g_active{nullptr};
std::atomic<SimdPath> g_forced{SimdPath::kAuto};
}  // namespace

const VectorKernelSet& VectorKernelsFor(SimdPath path) {
  switch (ResolveSimdPath(path)) {
    case SimdPath::kAvx512: return kAvx512VectorKernels;
    case SimdPath::kAvx2: return kAvx2VectorKernels;
    default: return kPortableVectorKernels;
  }
}

const VectorKernelSet& VectorKernels() {
  const VectorKernelSet* set = g_active.load(std::memory_order_acquire);
  if (set == nullptr) {
    set = &VectorKernelsFor(g_forced.load());
    g_active.store(set, std::memory_order_release);
  }
  return *set;
}

void ForceVectorSimdPath(SimdPath path) {
  g_forced.store(path);
  g_active.store(&VectorKernelsFor(path), std::memory_order_release);
}

SimdPath ActiveVectorSimdPath() { return VectorKernels().path; }

}  // namespace npu::kernels
