#!/usr/bin/env bash
# Builds the libFuzzer targets with clang-14 + ASan/UBSan and runs one of them.
#   scripts/fuzz.sh [SECONDS=600] [BUILD_DIR=/tmp/build-fuzz] [TARGET=graph]
#   TARGET graph: fuzz/graph_fuzzer.cc, structure-aware: graphs of registered ops
#                 with hostile attributes, shapes and dtypes, planned and run
#                 twice, checked by fuzz/case_check.h (clear statuses, inferred
#                 types, no unwritten memory read, float64 references)
#   TARGET plan:  fuzz/plan_fuzzer.cc, RunRequest wire bytes through decoding,
#                 BuildPlan, BindRun and execution
# Crashes and findings land in $BUILD_DIR/fuzz-artifacts-TARGET/ (KEEP_GOING=1: see below); the corpus grows
# in $BUILD_DIR/fuzz-corpus-TARGET/. A graph finding is a libFuzzer input: copy it to
# tests/fuzz/regressions/ and the fuzz_tests replay it in CI.
# Not part of CI: it takes minutes and a clang toolchain. Run it with nice.
set -euo pipefail
seconds=${1:-600}
build=${2:-/tmp/build-fuzz}
target=${3:-graph}
src=$(cd "$(dirname "$0")/.." && pwd)
jobs=${JOBS:-2}
case "$target" in
  graph|plan) ;;
  *) echo "fuzz.sh: unknown target $target (graph, plan)" >&2; exit 2 ;;
esac

cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
  -DCMAKE_C_FLAGS=-fsanitize=fuzzer-no-link \
  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link -include $src/fuzz/clang14_compat.h" \
  -DNPU_SANITIZE=address -DNPU_BUILD_FUZZ=ON -DNPU_BUILD_TESTS=OFF -DNPU_BUILD_BENCH=OFF >/dev/null
ninja -C "$build" -j"$jobs" "${target}_fuzzer"

# Seeds: the example graphs as Run requests are JSON, not wire bytes, so start
# from a few hand-made wire messages; libFuzzer grows the corpus from there.
corpus="$build/fuzz-corpus-$target"
artifacts="$build/fuzz-artifacts-$target"
mkdir -p "$corpus" "$artifacts"
if [ "$target" = plan ] && [ -z "$(ls -A "$corpus")" ]; then
  /usr/bin/python3 - "$corpus" <<'PY'
import struct, sys, os
def varint(n):
    out = b""
    while True:
        b = n & 0x7f; n >>= 7
        out += bytes([b | (0x80 if n else 0)])
        if not n: return out
def field(num, wt, payload):
    if wt == 0: return varint(num << 3) + varint(payload)
    return varint(num << 3 | 2) + varint(len(payload)) + payload
def s(num, text): return field(num, 2, text.encode())
def value_info(name, dtype, shape):
    return s(1, name) + field(2, 0, dtype) + field(3, 2, b"".join(varint(d) for d in shape))
def node(name, op, ins, outs):
    return s(1, name) + s(2, op) + b"".join(s(3, i) for i in ins) + b"".join(s(4, o) for o in outs)
def tensor(dtype, shape, data):
    return field(1, 0, dtype) + field(2, 2, b"".join(varint(d) for d in shape)) + field(3, 2, data)
def run(graph, inputs):
    return field(2, 2, graph) + b"".join(field(3, 2, s(1, n) + field(2, 2, t)) for n, t in inputs)
x = tensor(2, [4], struct.pack("4f", 1, 2, 3, 4))
g_add = field(2, 2, value_info("x", 2, [4])) + field(2, 2, value_info("y", 2, [4])) + \
        field(4, 2, node("a", "Add", ["x", "y"], ["o"])) + s(5, "o")
g_mm = field(2, 2, value_info("x", 1, [2, 4])) + field(2, 2, value_info("y", 1, [4, 3])) + \
       field(4, 2, node("m", "MatMul", ["x", "y"], ["o"])) + field(4, 2, node("r", "Relu", ["o"], ["p"])) + s(5, "p")
seeds = {
  "add": run(g_add, [("x", x), ("y", x)]),
  "matmul": run(g_mm, [("x", tensor(1, [2, 4], b"\x00\x3c" * 8)), ("y", tensor(1, [4, 3], b"\x00\x3c" * 12))]),
}
for name, data in seeds.items():
    open(os.path.join(sys.argv[1], name), "wb").write(data)
PY
fi
# The graph target starts from nothing (every input is a graph) and from the
# inputs that once found bugs.
if [ "$target" = graph ]; then
  find "$src/tests/fuzz/regressions" -type f ! -name '*.md' -exec cp -n {} "$corpus/" \;
fi
cd "$build"
# Graph inputs are choices, two bytes each: 4 KiB is more than a 6-node graph takes
# (and from the start: -len_control=0, so deep graphs come early).
max_len=8192
extra=()
if [ "$target" = graph ]; then
  max_len=4096
  extra=(-len_control=0)
fi
# KEEP_GOING=1 (graph): an oracle finding is written to $artifacts/findings/
# (the first input of each kind, with its report) and the run goes on, for long
# runs; otherwise the first finding stops it. A sanitizer report always stops it.
if [ "$target" = graph ] && [ "${KEEP_GOING:-0}" = 1 ]; then
  mkdir -p "$artifacts/findings"
  export NPU_FUZZ_FINDINGS="$artifacts/findings"
fi
UBSAN_OPTIONS=print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
  "./fuzz/${target}_fuzzer" -max_total_time="$seconds" -max_len="$max_len" -timeout=10 -rss_limit_mb=4096 "${extra[@]}" \
  -artifact_prefix="$artifacts/" -print_final_stats=1 "$corpus"
