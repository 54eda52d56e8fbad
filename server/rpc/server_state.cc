#include "server/rpc/server_state.h"

namespace npu::rpc {

absl::StatusOr<std::string> ServerState::TenantOf(const grpc::ServerContext&) const { return std::string(); }

}  // namespace npu::rpc
