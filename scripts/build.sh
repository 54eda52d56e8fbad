#!/usr/bin/env bash
# Configures (once) and builds npuserve in build/ (Release, Ninja, ccache when present).
#   scripts/build.sh [TARGET...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${NPU_BUILD_DIR:-$root/build}"
if [[ ! -f "$build/build.ninja" ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release ${NPU_CMAKE_ARGS:-}
fi
cmake --build "$build" ${1:+--target "$@"}
