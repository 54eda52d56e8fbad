#!/usr/bin/env bash
# Compiles the server and client with clang's thread-safety analysis as errors
# (-Wthread-safety): every member marked ABSL_GUARDED_BY is read and written
# with its lock held, and functions marked ABSL_EXCLUSIVE_LOCKS_REQUIRED are
# called with it. Compile only; no tests run.
#   scripts/thread_safety.sh [BUILD_DIR=build-tsa]
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build-tsa}
"$src/scripts/install-deps.sh" --clang
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
  -DCMAKE_CXX_FLAGS="-include $src/fuzz/clang14_compat.h -Wthread-safety -Werror=thread-safety" \
  -DNPU_BUILD_TESTS=OFF -DNPU_BUILD_BENCH=OFF >/dev/null
ninja -C "$build" -j"${JOBS:-2}" npu-server npu
echo "thread_safety: clean"
