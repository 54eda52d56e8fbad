#!/usr/bin/env bash
# Configures and builds npuserve in build/ (Release, Ninja, ccache when present).
#   NPU_CMAKE_ARGS="-DNPU_BUILD_TESTS=OFF ..." scripts/build.sh [TARGET...]
# Configuring every time is cheap once cached, and lets demo.sh (no tests or
# benches, so none of their packages) and test.sh (everything) share build/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${NPU_BUILD_DIR:-$root/build}"
# shellcheck disable=SC2086  # NPU_CMAKE_ARGS is a list of arguments
mkdir -p "$build"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release ${NPU_CMAKE_ARGS:-} > "$build/configure.log" 2>&1 \
  || { cat "$build/configure.log"; exit 1; }
cmake --build "$build" ${1:+--target "$@"}
