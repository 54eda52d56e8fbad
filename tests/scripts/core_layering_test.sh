#!/usr/bin/env bash
# The serving core includes no protocol: no gRPC, no HTTP library, no KServe
# messages (server/core/CMakeLists.txt checks its link graph the same way).
# And no call in the server is watched by polling: cancellation and deadlines
# are pushed (gRPC's done notification, server/rpc/unary_call.h), so
# ServerContext::IsCancelled() is asked nowhere.
#   core_layering_test.sh SOURCE_DIR
set -euo pipefail
src=${1:?source dir}
bad=$(grep -nE '#include *[<"](grpc|grpcpp|httplib|kserve/)|\.grpc\.pb\.h' "$src"/server/core/*.h "$src"/server/core/*.cc || true)
if [[ -n "$bad" ]]; then
  echo "server/core includes a protocol:"; echo "$bad"; exit 1
fi
poll=$(grep -rnE 'IsCancelled *\(' --include='*.cc' --include='*.h' "$src"/server || true)
if [[ -n "$poll" ]]; then
  echo "a call is polled for cancellation (push it: unary_call.h):"; echo "$poll"; exit 1
fi
echo "server/core: protocol-free; no call polled for cancellation"
