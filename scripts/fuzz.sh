#!/usr/bin/env bash
# Builds fuzz/plan_fuzzer with clang + libFuzzer + ASan/UBSan and runs it.
#   scripts/fuzz.sh [SECONDS=600] [BUILD_DIR=/tmp/build-fuzz]
# Crashes land in $BUILD_DIR/fuzz-artifacts/; the corpus grows in $BUILD_DIR/fuzz-corpus/.
# Not part of CI: it takes minutes and a clang toolchain.
set -euo pipefail
seconds=${1:-600}
build=${2:-/tmp/build-fuzz}
src=$(cd "$(dirname "$0")/.." && pwd)
jobs=${JOBS:-2}

cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
  -DCMAKE_C_FLAGS=-fsanitize=fuzzer-no-link \
  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link -include $src/fuzz/clang14_compat.h" \
  -DNPU_SANITIZE=address -DNPU_BUILD_FUZZ=ON -DNPU_BUILD_TESTS=OFF -DNPU_BUILD_BENCH=OFF >/dev/null
ninja -C "$build" -j"$jobs" plan_fuzzer

# Seeds: the example graphs as Run requests are JSON, not wire bytes, so start
# from a few hand-made wire messages; libFuzzer grows the corpus from there.
corpus="$build/fuzz-corpus"
mkdir -p "$corpus" "$build/fuzz-artifacts"
if [ -z "$(ls -A "$corpus")" ]; then
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
cd "$build"
ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
  ./fuzz/plan_fuzzer -max_total_time="$seconds" -max_len=8192 -timeout=10 -rss_limit_mb=4096 \
  -artifact_prefix="$build/fuzz-artifacts/" -print_final_stats=1 "$corpus"
