#!/usr/bin/env bash
# Installs the Python client npuserve into a virtual environment, offline:
#   scripts/install-python.sh [--shims] [VENV]     (default VENV: .venv in the repository)
# --shims also installs npuserve-shims (top-level torch_npu and apex on
# npu-server), unless the environment already has a torch_npu (Ascend's own)
# or an apex (NVIDIA's), which it would shadow.
# The environment sees Debian's python3-grpcio, python3-protobuf, python3-numpy
# (and python3-torch) through --system-site-packages; pip builds the wheels
# from client/python[-shims] without fetching anything (--no-build-isolation --no-deps).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
shims=0
if [ "${1:-}" = --shims ]; then shims=1; shift; fi
venv=${1:-$root/.venv}
/usr/bin/python3 -m venv --system-site-packages "$venv"
"$venv/bin/pip" install --quiet --no-build-isolation --no-deps "$root/client/python"
"$venv/bin/python" -c 'import npuserve; print(f"npuserve {npuserve.__version__} installed in '"$venv"'")'
if [ "$shims" = 1 ]; then
  if ! found=$("$venv/bin/python" - <<'PY'
import importlib.util, sys
theirs = [name for name in ("torch_npu", "apex")
          if (spec := importlib.util.find_spec(name)) is not None and "npuserve" not in open(spec.origin).read()]
print(" and ".join(theirs))
sys.exit(1 if theirs else 0)
PY
  ); then
    echo "install-python: this environment has $found already; npuserve-shims would shadow it: not installed" >&2
    exit 1
  fi
  "$venv/bin/pip" install --quiet --no-build-isolation --no-deps "$root/client/python-shims"
  "$venv/bin/python" -c 'import torch_npu; print(f"torch_npu {torch_npu.__version__} (npuserve-shims) installed")'
fi
