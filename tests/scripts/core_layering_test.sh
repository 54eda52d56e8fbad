#!/usr/bin/env bash
# The serving core includes no protocol: no gRPC, no HTTP library, no KServe
# messages (server/core/CMakeLists.txt checks its link graph the same way).
#   core_layering_test.sh SOURCE_DIR
set -euo pipefail
src=${1:?source dir}
bad=$(grep -nE '#include *[<"](grpc|grpcpp|httplib|kserve/)|\.grpc\.pb\.h' "$src"/server/core/*.h "$src"/server/core/*.cc || true)
if [[ -n "$bad" ]]; then
  echo "server/core includes a protocol:"; echo "$bad"; exit 1
fi
echo "server/core: protocol-free"
