// The per-ISA Vector kernel sets, defined in vector_kernels_{avx512,avx2,portable}.cc
// (constant-initialised, so usable during static initialisation); vector_kernels.cc
// picks one. The SIMD sets are only usable where CpuCanRun says so.
#pragma once

#include "kernels/vector_kernels.h"

namespace npu::kernels {

extern const VectorKernelSet kAvx512VectorKernels;
extern const VectorKernelSet kAvx2VectorKernels;
extern const VectorKernelSet kPortableVectorKernels;

}  // namespace npu::kernels
