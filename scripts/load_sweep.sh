#!/usr/bin/env bash
# Starts a local npu-server, sweeps `npu load` over concurrency levels on a
# graph, and plots latency percentiles and throughput against concurrency.
#   scripts/load_sweep.sh [GRAPH.json] [OUT_DIR=load-sweep] [BUILD_DIR=build, the repository's]
# Env: LEVELS (default 1,2,4,8,16,32,64), REQUESTS (500 per level), DURATION (20 s per level).
# Writes OUT_DIR/sweep.csv and OUT_DIR/sweep.png (needs python3-matplotlib).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
graph=${1:-$src/examples/graphs/mlp.json}
out=${2:-load-sweep}
build=${3:-${NPU_BUILD_DIR:-$src/build}}
levels=${LEVELS:-1,2,4,8,16,32,64}
mkdir -p "$out"
for bin in server/rpc/npu-server client/npu; do
  [[ -x "$build/$bin" ]] || { echo "load_sweep: no $build/$bin; build first (scripts/build.sh npu-server npu)" >&2; exit 2; }
done

port_file=$(mktemp)
"$build/server/rpc/npu-server" --listen=127.0.0.1:0 --max-queue=256 >"$port_file" \
  2>"$out/server.log" &
server=$!
trap 'kill $server 2>/dev/null || true; wait $server 2>/dev/null || true; rm -f "$port_file"' EXIT
for _ in $(seq 100); do grep -q listening "$port_file" && break; sleep 0.1; done
port=$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\).*/\1/p' "$port_file" | head -1)

"$build/client/npu" --target "127.0.0.1:$port" load "$graph" --concurrency "$levels" \
  --requests "${REQUESTS:-500}" --duration "${DURATION:-20}" --warmup 100 --format csv | tee "$out/sweep.csv"

/usr/bin/python3 - "$out/sweep.csv" "$out/sweep.png" "$(basename "$graph")" <<'PY'
import csv, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
rows = list(csv.DictReader(open(sys.argv[1])))
c = [int(r["concurrency"]) for r in rows]
fig, (lat, thr) = plt.subplots(1, 2, figsize=(11, 4))
for key in ("p50_ms", "p90_ms", "p95_ms", "p99_ms"):
    lat.plot(c, [float(r[key]) for r in rows], marker="o", label=key.replace("_ms", ""))
lat.set(xscale="log", yscale="log", xlabel="concurrent clients", ylabel="latency (ms)", title="Run latency")
lat.legend()
thr.plot(c, [float(r["throughput"]) for r in rows], marker="o")
thr.set(xscale="log", xlabel="concurrent clients", ylabel="requests/s", title="Throughput")
fig.suptitle(f"npu load {sys.argv[3]} (npuserve, loopback)")
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=100)
print("wrote", sys.argv[2], file=sys.stderr)
PY
