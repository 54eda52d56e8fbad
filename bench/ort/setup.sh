#!/usr/bin/env bash
# Installs the ONNX Runtime anchor of `npu-bench models` (onnxruntime-node, the
# version bench/ort/package.json pins) into DIR/node_modules, from the npm
# registry npm is configured with. Idempotent: an installed pinned version is
# kept. The package's postinstall would fetch GPU execution providers, which the
# CPU anchor does not use (and these machines cannot reach): scripts are not run; the
# CPU library ships inside the package.
#   bench/ort/setup.sh [DIR=build/bench-ort]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-$here/../../build/bench-ort}
mkdir -p "$dir"
want=$(sed -n 's/.*"onnxruntime-node": *"\([^"]*\)".*/\1/p' "$here/package.json")
have=$(sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$dir/node_modules/onnxruntime-node/package.json" 2>/dev/null | head -1 || true)
if [ "$have" = "$want" ] && cmp -s "$here/ort_models.js" "$dir/ort_models.js"; then
  exit 0
fi
command -v npm >/dev/null || { echo "bench/ort/setup.sh: npm not found (Debian: apt-get install npm)" >&2; exit 1; }
cp "$here/package.json" "$here/ort_models.js" "$dir/"
if [ "$have" != "$want" ]; then
  echo "bench/ort/setup.sh: installing onnxruntime-node $want into $dir" >&2
  (cd "$dir" && npm install --no-audit --no-fund --no-package-lock --ignore-scripts >&2)
fi
node -e "require('$dir/node_modules/onnxruntime-node')" || {
  echo "bench/ort/setup.sh: onnxruntime-node $want installed but does not load on this machine" >&2; exit 1; }
