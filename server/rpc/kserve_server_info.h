// What the KServe v2 frontends (gRPC and HTTP) say about the server itself.
#pragma once

#include "absl/status/status.h"
#include "kserve/grpc_service.pb.h"
#include "server/core/server_state.h"

namespace npu::rpc {

// OK while the server admits work (not draining) and no device is wedged,
// what grpc.health.v1 reports as SERVING; else UNAVAILABLE saying why.
absl::Status KserveServerReadiness(const core::ServerState& state);

// Name "npuserve", the project version, and the extensions served:
// model_repository, binary_tensor_data (HTTP), parameters.
inference::ServerMetadataResponse KserveServerMetadata();

}  // namespace npu::rpc
