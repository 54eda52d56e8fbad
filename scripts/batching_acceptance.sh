#!/usr/bin/env bash
# Dynamic batching's acceptance run (docs/serving.md, "Dynamic batching"): a
# Triton-style repository with a 16 MiB-weight ONNX MLP, with and without
# dynamic_batching { preferred_batch_size: [8, 16] max_queue_delay_microseconds: 2000 },
# 16 concurrent batch-1 callers: `npu load` on each (throughput, mean executed
# batch), then an independent Python KServe client (scripts/batching_client.py).
#   scripts/batching_acceptance.sh [BUILD_DIR=build] [OUT_DIR=batching-acceptance]
# Env: REQUESTS (10000 per npu load row), DURATION (60 s per row at most),
# OMP_WAIT_POLICY (passive: docs/serving.md, "Many callers on few cores").
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-${NPU_BUILD_DIR:-$src/build}}
out=${2:-batching-acceptance}
for bin in server/rpc/npu-server client/npu; do
  [[ -x "$build/$bin" ]] || { echo "batching_acceptance: no $build/$bin; build first" >&2; exit 2; }
done
mkdir -p "$out/repo"
/usr/bin/python3 "$src/scripts/batching_repository.py" "$out/repo"

port_file=$(mktemp)
# The device's OpenMP team sleeps between runs instead of spinning, so the
# gRPC threads and the callers on the same two cores get the CPU.
OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive} "$build/server/rpc/npu-server" --listen=127.0.0.1:0 --model_repository="$out/repo" >"$port_file" 2>"$out/server.log" &
server=$!
trap 'kill $server 2>/dev/null || true; wait $server 2>/dev/null || true; rm -f "$port_file"' EXIT
for _ in $(seq 300); do grep -q listening "$port_file" && break; sleep 0.1; done
port=$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\).*/\1/p' "$port_file" | head -1)

for model in mlp_plain mlp_batched; do
  echo "== npu load --model $model --concurrency 16"
  "$build/client/npu" --target "127.0.0.1:$port" load --model "$model" --input "x=$out/repo/x1.npy" \
    --concurrency 16 --requests "${REQUESTS:-10000}" --warmup 1000 --duration "${DURATION:-60}" --no-server-profile \
    2>&1 | tee "$out/$model.txt"
done
echo "== scripts/batching_client.py (KServe gRPC, 16 callers)"
/usr/bin/python3 "$src/scripts/batching_client.py" "$port" 16 "${REQUESTS:-10000}" "${DURATION:-60}" | tee "$out/python.txt"
