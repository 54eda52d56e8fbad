#!/usr/bin/env bash
# A GPU training script on the simulated NPUs, three ways (issue 23's acceptance):
#   scripts/migrate_acceptance.sh [BUILD_DIR] [EPOCHS]   (default: build, 6)
# runs examples/migrate/train_zoo_ddp_apex.py (DDP over 2 processes, nccl, apex O2 with
# loss_scale=128.0, cuda:N strings) in its CPU / gloo / fp32 form, as `npu migrate` converts
# it, and unchanged with `import torch_npu` + transfer_to_npu prepended, the last two against a
# fresh npu-server with two devices on loopback. Prints each form's last validation accuracy and
# wall time, and the NPU forms' accuracy difference and time ratio against the CPU form.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
epochs=${2:-6}
script="$root/examples/migrate/train_zoo_ddp_apex.py"
work=$(mktemp -d)
server_pid=
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

"$build/client/npu" migrate "$script" --out "$work/migrated" > "$work/migrate.log"
{ echo "import torch_npu"; echo "from torch_npu.contrib import transfer_to_npu"; cat "$script"; } > "$work/transfer.py"

"$build/server/rpc/npu-server" --listen=127.0.0.1:0 --devices=2 > "$work/server.out" 2> "$work/server.err" &
server_pid=$!
for _ in $(seq 100); do
  target=$(grep -o 'listening on 127\.0\.0\.1:[0-9]*' "$work/server.out" | head -1 | cut -d' ' -f3) || true
  [ -n "$target" ] && break
  sleep 0.1
done
[ -n "$target" ] || { echo "npu-server did not start:"; cat "$work/server.err"; exit 1; }

# One run: prints "ACCURACY SECONDS"; the script's output goes to $work/NAME.log.
run() {
  local name=$1; shift
  local start end
  start=$(date +%s.%N)
  PYTHONPATH="$build/python" NPUSERVE_TARGET=$target timeout 1800 /usr/bin/python3 "$@" --epochs "$epochs" \
    > "$work/$name.log" 2>&1 || { echo "$name failed:"; tail -20 "$work/$name.log"; exit 1; }
  end=$(date +%s.%N)
  local acc
  acc=$(grep -o 'val_acc [0-9.]*' "$work/$name.log" | tail -1 | cut -d' ' -f2)
  echo "$acc $(echo "$end - $start" | bc)"
}

read -r cpu_acc cpu_s < <(run cpu "$script" --cpu)
read -r mig_acc mig_s < <(run migrated "$work/migrated/train_zoo_ddp_apex.py")
read -r tr_acc tr_s < <(run transfer "$work/transfer.py")
printf '%-28s %8s %9s %10s %8s\n' form val_acc wall_s "acc - cpu" "x cpu"
printf '%-28s %8s %9.1f %10s %8s\n' "cpu / gloo / fp32" "$cpu_acc" "$cpu_s" "" ""
for row in "npu migrate:$mig_acc:$mig_s" "transfer_to_npu:$tr_acc:$tr_s"; do
  IFS=: read -r name acc s <<< "$row"
  printf '%-28s %8s %9.1f %+10.4f %8.2f\n' "$name (npu-server)" "$acc" "$s" "$(echo "$acc - $cpu_acc" | bc)" \
    "$(echo "$s / $cpu_s" | bc -l)"
done
echo "epochs: $epochs; the scripts' last lines:"
for name in cpu migrated transfer; do echo "  $name: $(grep '^epoch' "$work/$name.log" | tail -1)"; done
