#!/usr/bin/env bash
# The binaries' command lines: --version everywhere, --help that lists flags,
# usage errors that say what is wrong (no gRPC status word) and exit 2.
#   usage_test.sh NPU NPU_SERVER [NPU_BENCH]
set -uo pipefail
npu=$1 server=$2 bench=${3:-}
failures=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# expect EXIT_CODE REGEX COMMAND...: runs it, checks its exit code and that its
# stdout+stderr match REGEX (extended grep).
expect() {
  local want=$1 regex=$2
  shift 2
  "$@" >"$out" 2>&1
  local got=$?
  if [[ $got -ne $want ]] || ! grep -Eq -- "$regex" "$out"; then
    echo "FAIL: $* -> exit $got (want $want), output (want /$regex/):"
    sed 's/^/    /' "$out"
    failures=$((failures + 1))
  fi
}
# refuse REGEX COMMAND...: the output must not match REGEX.
refuse() {
  local regex=$1
  shift
  "$@" >"$out" 2>&1
  if grep -Eq -- "$regex" "$out"; then
    echo "FAIL: $* printed /$regex/:"
    sed 's/^/    /' "$out"
    failures=$((failures + 1))
  fi
}

version='^[a-z-]+ [0-9]+\.[0-9]+\.[0-9]+ \((Release|Debug|RelWithDebInfo|MinSizeRel|unspecified) build(, git [0-9a-f]{12}(-dirty)?)?\)$'
expect 0 "$version" "$npu" --version
expect 0 "$version" "$server" --version
refuse "Debug build \(NDEBUG" "$server" --version

expect 2 "Subcommands:" "$npu"  # no arguments: the help, exit 2
expect 2 '^npu: error: unknown command "bogus" \(commands: devices, health, stats, run, compare, upload, download, free, handles, load, train, migrate\)' "$npu" bogus
expect 2 "^npu: error: graph is required" "$npu" run
expect 2 "^npu: error: --tls-cert with --tls-key|needs its key" "$npu" --tls-cert x.pem devices
for args in "" "bogus" "run" "--timeout x devices" "load --concurrency 0 g.json"; do
  # shellcheck disable=SC2086
  refuse "INVALID_ARGUMENT|NOT_FOUND" "$npu" $args
done
expect 0 "MODEL\.onnx" "$npu" run --help
expect 0 "--loss-scale" "$npu" train --help
expect 0 "--trace FILE.json .*full-batch step" "$npu" train --help
expect 2 "^npu: error: --data is required" "$npu" train m.onnx
expect 0 "^usage: npu migrate .*SCRIPT\.py" "$npu" migrate --help  # the Python tool's own help
expect 2 "required: SCRIPT\.py" "$npu" migrate
expect 0 "--tls-cert" "$npu" --help

# abseil exits 1 after --help.
expect 1 "--max_queue \(runs that may wait" "$server" --help
expect 1 "--log_requests" "$server" --help
expect 1 "dashes or underscores" "$server" --help
expect 2 'unexpected argument "stray"' "$server" stray
expect 1 "Illegal value 'x' specified for flag 'max_queue'" "$server" --max-queue=x

if [[ -n "$bench" ]]; then
  expect 0 "$version" "$bench" --version
  expect 2 "Subcommands:" "$bench"
  expect 2 "^npu-bench: error: --reps: " "$bench" gemm --reps x
  expect 2 "^npu-bench: error: --reps: " "$bench" gemm --reps 0
  expect 2 "bad shape '1x2'" "$bench" gemm --shapes 1x2
  expect 2 "^npu-bench: error: --threads: " "$bench" gemm --threads 1,y
  expect 2 "^npu-bench: error: --clients: " "$bench" soak --target t --pid 1 --clients 2x
  expect 2 "^npu-bench: error: --case: " "$bench" service --case foo
  expect 2 "^npu-bench: error: --mib: " "$bench" vector --mib -1
  expect 2 "^npu-bench: error: --target is required" "$bench" soak --pid 1
fi

if ((failures > 0)); then
  echo "$failures usage check(s) failed"
  exit 1
fi
echo "all usage checks passed"
