#!/usr/bin/env bash
# The tests: install, build everything (Release, Ninja), run the whole suite.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${NPU_BUILD_DIR:-$root/build}"

"$root/scripts/install-deps.sh" --test
NPU_CMAKE_ARGS="-DNPU_BUILD_TESTS=ON -DNPU_BUILD_BENCH=ON ${NPU_CMAKE_ARGS:-}" "$root/scripts/build.sh"
cd "$build"
ctest --output-on-failure -j2 --timeout 900
