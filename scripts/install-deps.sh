#!/usr/bin/env bash
# Installs the Debian packages npuserve needs, only those missing (idempotent).
#   scripts/install-deps.sh          build + run (npu-server, npu, the Python client, demo.sh's timeline)
#   scripts/install-deps.sh --test   also what the test suite and benches use
#   scripts/install-deps.sh --clang  also clang 14 (thread-safety analysis, fuzzing)
set -euo pipefail

build_pkgs=(
  g++ cmake ninja-build ccache pkg-config
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler grpc-proto
  libabsl-dev libcli11-dev libcpp-httplib-dev nlohmann-json3-dev libonnx-dev libssl-dev zlib1g-dev
  python3-grpcio python3-protobuf python3-numpy python3-matplotlib
  python3-venv python3-pip python3-setuptools python3-wheel
)
test_pkgs=(
  libgtest-dev libgmock-dev libbenchmark-dev libopenblas-dev libdnnl-dev ocl-icd-opencl-dev
  python3-torch python3-torchvision python3-onnx python3-yaml openssl libonnx-testdata python3-grpc-tools curl
  python3-sklearn
)

clang_pkgs=(clang-14 libclang-rt-14-dev)

pkgs=("${build_pkgs[@]}")
for group in "$@"; do
  case $group in
    --test) pkgs+=("${test_pkgs[@]}") ;;
    --clang) pkgs+=("${clang_pkgs[@]}") ;;
    *) echo "install-deps: unknown option $group (--test, --clang)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#pkgs[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
