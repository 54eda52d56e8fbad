// The tenant a gRPC call acts for: its "authorization" metadata, read by the
// core's bearer-token check (core::ServerState::TenantOfAuthorization).
#pragma once

#include <string>

#include <grpcpp/server_context.h>

#include "absl/status/statusor.h"
#include "server/core/server_state.h"

namespace npu::rpc {

absl::StatusOr<std::string> TenantOf(const core::ServerState& state, const grpc::ServerContextBase& ctx);

}  // namespace npu::rpc
