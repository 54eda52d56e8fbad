#!/usr/bin/env bash
# Builds the libFuzzer targets with clang-14 + ASan/UBSan and runs one of them.
#   scripts/fuzz.sh [SECONDS=600] [BUILD_DIR=/tmp/build-fuzz] [TARGET=graph]
#   TARGET graph: fuzz/graph_fuzzer.cc, structure-aware: graphs of registered ops
#                 with hostile attributes, shapes and dtypes, planned and run
#                 twice, checked by fuzz/case_check.h (clear statuses, inferred
#                 types, no unwritten memory read, float64 references)
#   TARGET plan:  fuzz/plan_fuzzer.cc, RunRequest wire bytes through decoding,
#                 BuildPlan, BindRun and execution
#   TARGET http:  fuzz/http_fuzzer.cc, the HTTP/1.1 request reader and content
#                 decoding on raw and generated streams (the same requests
#                 whatever the split into reads; limits; statuses)
#   TARGET kserve_json: fuzz/kserve_json_fuzzer.cc, KServe REST inference
#                 bodies, raw and generated (nesting, shapes, data, binary)
#   TARGET model_config: fuzz/model_config_fuzzer.cc, a model's config.pbtxt,
#                 raw and generated (fields, nesting, values, size)
#   TARGET onnx:  fuzz/onnx_fuzzer.cc, mutated real models (ONNX's conformance
#                 models as seeds, mutated as models) through import, passes,
#                 planning and small runs
#   TARGET training: fuzz/training_fuzzer.cc, TrainingService requests
#                 against an npu-server in the process
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
  graph|plan|http|kserve_json|model_config|onnx|training) ;;
  *) echo "fuzz.sh: unknown target $target (graph, plan, http, kserve_json, model_config, onnx, training)" >&2; exit 2 ;;
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
  find "$src/tests/fuzz/regressions" -maxdepth 1 -type f ! -name '*.md' -exec cp -n {} "$corpus/" \;
fi
# The other surfaces start from their regressions and a few real inputs.
if [ -d "$src/tests/fuzz/regressions/$target" ]; then
  find "$src/tests/fuzz/regressions/$target" -type f ! -name '*.md' -exec cp -n {} "$corpus/" \;
fi
if [ "$target" = onnx ] && [ -z "$(ls -A "$corpus")" ]; then
  for m in /usr/share/libonnx-testdata/data/node/*/model.onnx; do
    cp -n "$m" "$corpus/$(basename "$(dirname "$m")").onnx"
  done
fi
if [ "$target" = http ] && [ -z "$(ls -A "$corpus")" ]; then
  printf '\x00\x05\x07\x40\x01GET /v2/health/live HTTP/1.1\r\nHost: h\r\n\r\n' >"$corpus/get"
  printf '\x00\x40\x40\x40\x40POST /v2/models/m/infer HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3;x\r\nabc\r\n0\r\nT: v\r\n\r\n' >"$corpus/chunked"
  printf '\x00\x01\x02\x03\x04POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\nhiGET / HTTP/1.0\r\n\r\n' >"$corpus/pipelined"
  head -c 512 /dev/urandom | { printf '\x01'; cat; } >"$corpus/generated"
fi
if [ "$target" = kserve_json ] && [ -z "$(ls -A "$corpus")" ]; then
  printf '\x00\xff\xff{"id":"r","parameters":{"npu_profile":true},"inputs":[{"name":"x","shape":[2,2],"datatype":"FP32","data":[[1,2],[3,4]]}],"outputs":[{"name":"y","parameters":{"binary_data":true}}]}' >"$corpus/json"
  head -c 512 /dev/urandom | { printf '\x01'; cat; } >"$corpus/generated"
fi
cd "$build"
# Graph inputs are choices, two bytes each: 4 KiB is more than a 6-node graph takes
# (and from the start: -len_control=0, so deep graphs come early).
max_len=8192
extra=()
case "$target" in
  graph|training) max_len=4096; extra=(-len_control=0) ;;
  http|kserve_json) max_len=65536 ;;
  onnx) max_len=1048576 ;;
esac
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
