#!/usr/bin/env bash
# The tests: install, build everything (Release, Ninja), run the whole suite;
# then the dynamic batcher's queue under ThreadSanitizer (its own small build,
# about 15 s; the whole suite under TSan is scripts/sanitize.sh thread).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${NPU_BUILD_DIR:-$root/build}"
tsan="${NPU_TSAN_BATCHER_DIR:-$root/build-tsan-batcher}"

"$root/scripts/install-deps.sh" --test
NPU_CMAKE_ARGS="-DNPU_BUILD_TESTS=ON -DNPU_BUILD_BENCH=ON ${NPU_CMAKE_ARGS:-}" "$root/scripts/build.sh"
(cd "$build" && ctest --output-on-failure -j2 --timeout 900)

mkdir -p "$tsan"
cmake -S "$root" -B "$tsan" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNPU_SANITIZE=thread \
  -DNPU_BUILD_BENCH=OFF > "$tsan/configure.log" 2>&1 || { cat "$tsan/configure.log"; exit 1; }
cmake --build "$tsan" --target batcher_tests
echo "== the dynamic batcher under ThreadSanitizer (5 repeats)"
# Without address-space randomization where setarch allows it: TSan's fixed
# memory layout fails to start on kernels with more random mmap bits.
norandom=()
if setarch "$(uname -m)" -R true 2>/dev/null; then norandom=(setarch "$(uname -m)" -R); fi
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$root/scripts/tsan.supp" \
  "${norandom[@]}" "$tsan/tests/batcher_tests" --gtest_repeat=5 --gtest_brief=1
