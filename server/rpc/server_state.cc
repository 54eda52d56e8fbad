#include "server/rpc/server_state.h"

namespace npu::rpc {

absl::StatusOr<std::string> ServerState::TenantOf(const grpc::ServerContextBase& ctx) const {
  if (auth == nullptr) return std::string();  // before the metadata lookup: the common case
  const auto& metadata = ctx.client_metadata();
  auto it = metadata.find("authorization");
  return TenantOfAuthorization(it == metadata.end() ? absl::string_view()
                                                    : absl::string_view(it->second.data(), it->second.size()));
}

absl::StatusOr<std::string> ServerState::TenantOfAuthorization(absl::string_view authorization) const {
  if (auth == nullptr) return std::string();
  return auth->TenantFor(authorization);
}

absl::Status ServerState::CheckAdmitting() const {
  if (draining.load()) {
    return absl::UnavailableError("the server is shutting down and takes no new work; retry on another replica");
  }
  return absl::OkStatus();
}

}  // namespace npu::rpc
