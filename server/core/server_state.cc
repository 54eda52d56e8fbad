#include "server/core/server_state.h"

namespace npu::core {

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

}  // namespace npu::core
