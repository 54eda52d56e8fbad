#!/usr/bin/env bash
# The main job: install, build, start npu-server on 127.0.0.1, run the MLP
# example through the `npu` command line with its profile and a Perfetto trace,
# render the trace's core timeline, stop the server.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${NPU_BUILD_DIR:-$root/build}"
out="${NPU_DEMO_OUT:-$root/out/demo}"

"$root/scripts/install-deps.sh"
NPU_CMAKE_ARGS="-DNPU_BUILD_TESTS=OFF -DNPU_BUILD_BENCH=OFF ${NPU_CMAKE_ARGS:-}" \
  "$root/scripts/build.sh" npu-server npu

server="$build/server/rpc/npu-server"
npu="$build/client/npu"
mkdir -p "$out"
log="$out/npu-server.log"

# Port 0: the server picks a free loopback port and prints it.
"$server" --listen 127.0.0.1:0 --preset ascend910 > "$out/listening.txt" 2> "$log" &
server_pid=$!
trap 'kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  grep -q "listening on" "$out/listening.txt" 2>/dev/null && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$log"; exit 1; }
  sleep 0.1
done
target=$(sed -n 's/.*listening on \([0-9.]*:[0-9]*\).*/\1/p' "$out/listening.txt")
echo "== npu-server (pid $server_pid) listening on $target"

echo "== npu devices"
"$npu" --target "$target" devices
echo
echo "== npu run examples/graphs/mlp.json --profile --trace --op-summary"
"$npu" --target "$target" run "$root/examples/graphs/mlp.json" \
  --input "x=$root/examples/graphs/mlp_x.npy" --output-dir "$out" --profile \
  --trace "$out/trace.json" --op-summary "$out/op_summary.csv"
echo
echo "== scripts/plot_trace.py: the AI-core timeline of the trace"
/usr/bin/python3 "$root/scripts/plot_trace.py" "$out/trace.json" "$out/timeline.png"
echo
echo "== outputs in $out (y.npy, op_summary.csv, trace.json: open it at ui.perfetto.dev, timeline.png); server log: $log"
kill "$server_pid"
wait "$server_pid" || true
trap - EXIT
echo "== npu-server stopped"
