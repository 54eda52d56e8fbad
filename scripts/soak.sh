#!/usr/bin/env bash
# Soak: a local npu-server under 64 concurrent clients of mixed requests for 5
# minutes: npu.v1 (runs, uploads, downloads, frees, registrations, bad
# requests), KServe gRPC ModelInfer, KServe REST (JSON and binary inferences,
# probes, malformed bodies and framing) and TrainingService steps; fails on any
# unexpected status or server RSS growth >= 10% after the warm-up.
#   scripts/soak.sh [BUILD_DIR=/tmp/build-svc] [SECONDS=300] [CLIENTS=64] [SURFACES=npu,kserve,rest,train]
set -euo pipefail
build=${1:-/tmp/build-svc}
seconds=${2:-300}
clients=${3:-64}
surfaces=${4:-npu,kserve,rest,train}
log=$(mktemp /tmp/npu-soak-server.XXXXXX.log)
out=$(mktemp /tmp/npu-soak-port.XXXXXX)
"$build/server/rpc/npu-server" --listen=127.0.0.1:0 --http_listen=127.0.0.1:0 --log_level=error --max_queue=256 \
  >"$out" 2>"$log" &
server=$!
trap 'kill $server 2>/dev/null || true; wait $server 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q listening "$out" && break; sleep 0.1; done
port=$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\).*/\1/p' "$out" | head -1)
for _ in $(seq 100); do grep -q "KServe v2 HTTP/REST on" "$log" && break; sleep 0.1; done
http_port=$(sed -n 's|.*KServe v2 HTTP/REST on http://127\.0\.0\.1:\([0-9]*\)/v2.*|\1|p' "$log" | head -1)
echo "soak: npu-server pid $server on port $port (REST $http_port), $clients clients ($surfaces), $seconds s;" \
  "server log $log" >&2
"$build/bench/npu-bench" soak --target "127.0.0.1:$port" --http-port "$http_port" --pid "$server" \
  --clients "$clients" --seconds "$seconds" --surfaces "$surfaces"
