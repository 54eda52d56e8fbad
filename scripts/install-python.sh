#!/usr/bin/env bash
# Installs the Python client npuserve into a virtual environment, offline:
#   scripts/install-python.sh [VENV]     (default: .venv in the repository)
# The environment sees Debian's python3-grpcio, python3-protobuf, python3-numpy
# (and python3-torch) through --system-site-packages; pip builds the wheel from
# client/python without fetching anything (--no-build-isolation --no-deps).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=${1:-$root/.venv}
/usr/bin/python3 -m venv --system-site-packages "$venv"
"$venv/bin/pip" install --quiet --no-build-isolation --no-deps "$root/client/python"
"$venv/bin/python" -c 'import npuserve; print(f"npuserve {npuserve.__version__} installed in '"$venv"'")'
