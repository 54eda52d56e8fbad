#!/usr/bin/env bash
# Builds the project and runs the whole test suite under sanitizers:
#   scripts/sanitize.sh [address|thread|all]   (default: all)
# address = AddressSanitizer + UndefinedBehaviorSanitizer, thread = ThreadSanitizer
# (CMake option NPU_SANITIZE). Build trees: build-asan/, build-tsan/ in the checkout.
set -euo pipefail
which=${1:-all}
src=$(cd "$(dirname "$0")/.." && pwd)
jobs=${JOBS:-$(nproc)}

run() {
  local kind=$1 build=$2
  cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNPU_SANITIZE="$kind" \
    -DNPU_BUILD_BENCH=OFF >/dev/null
  ninja -C "$build" -j"$jobs"
  # halt_on_error: the first report fails the test that caused it. OpenMP's
  # runtime (libgomp) is not built with TSan: see scripts/tsan.supp.
  # allocator_may_return_null: a request too big for memory fails as glibc's
  # malloc does (null, then std::bad_alloc), which tests of refused giant
  # allocations rely on; ASan would otherwise abort the process.
  ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:abort_on_error=1:allocator_may_return_null=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 allocator_may_return_null=1 suppressions=$src/scripts/tsan.supp" \
  OMP_NUM_THREADS=2 \
    ctest --test-dir "$build" --output-on-failure -j"$jobs" --timeout 900
}

case $which in
  address) run address "$src/build-asan" ;;
  thread) run thread "$src/build-tsan" ;;
  all) run address "$src/build-asan" && run thread "$src/build-tsan" ;;
  *) echo "usage: $0 [address|thread|all]" >&2; exit 2 ;;
esac
