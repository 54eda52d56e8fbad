// Force-included (-include) in the clang-14 fuzz build only: clang 14's
// __builtin_cpu_supports does not know "f16c", which the kernels ask for.
// F16C is read from CPUID instead; every other feature goes to the builtin.
#pragma once

#include <cpuid.h>
#include <string.h>

static inline int npu_fuzz_cpu_supports(const char* feature) {
  if (strcmp(feature, "f16c") == 0) {
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) != 0 && __builtin_cpu_supports("avx");
  }
  if (strcmp(feature, "avx") == 0) return __builtin_cpu_supports("avx");
  if (strcmp(feature, "avx2") == 0) return __builtin_cpu_supports("avx2");
  if (strcmp(feature, "fma") == 0) return __builtin_cpu_supports("fma");
  if (strcmp(feature, "avx512f") == 0) return __builtin_cpu_supports("avx512f");
  if (strcmp(feature, "avx512bw") == 0) return __builtin_cpu_supports("avx512bw");
  if (strcmp(feature, "avx512vl") == 0) return __builtin_cpu_supports("avx512vl");
  return 0;
}
#define __builtin_cpu_supports(feature) npu_fuzz_cpu_supports(feature)
