#include "server/rpc/server_state.h"

namespace npu::rpc {

absl::StatusOr<std::string> ServerState::TenantOf(const grpc::ServerContextBase& ctx) const {
  if (auth == nullptr) return std::string();
  const auto& metadata = ctx.client_metadata();
  auto it = metadata.find("authorization");
  if (it == metadata.end()) return auth->TenantFor("");
  return auth->TenantFor(absl::string_view(it->second.data(), it->second.size()));
}

absl::Status ServerState::CheckAdmitting() const {
  if (draining.load()) {
    return absl::UnavailableError("the server is shutting down and takes no new work; retry on another replica");
  }
  return absl::OkStatus();
}

}  // namespace npu::rpc
