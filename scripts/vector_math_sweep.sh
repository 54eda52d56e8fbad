#!/usr/bin/env bash
# The Vector math accuracy sweep at a density CI cannot afford: the fp32 sweep of
# tests/kernels/vector_math_test.cc over every STRIDE-th bit pattern of each sign
# (61: 70M inputs, several minutes on one core) instead of CI's every 8209th, and
# the check that every SIMD path gives the same bits on those inputs.
#   scripts/vector_math_sweep.sh [STRIDE=61] [BUILD_DIR=build]
# Prints the maximum ulp error per function: docs/ops.md's "every 61st pattern"
# column, from which the test's bounds are taken. Not part of CI.
set -euo pipefail
stride=${1:-61}
build=${2:-build}
src=$(cd "$(dirname "$0")/.." && pwd)
case $build in /*) ;; *) build="$src/$build" ;; esac
cmake --build "$build" --target kernels_tests -j"${JOBS:-2}"
NPU_VECTOR_MATH_STRIDE=$stride "$build/tests/kernels_tests" \
  --gtest_filter='VectorMath.AccuracyOverADenseFp32Sweep:VectorMath.EveryPathGivesTheSameBits'
