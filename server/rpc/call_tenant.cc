#include "server/rpc/call_tenant.h"

namespace npu::rpc {

absl::StatusOr<std::string> TenantOf(const core::ServerState& state, const grpc::ServerContextBase& ctx) {
  if (state.auth == nullptr) return std::string();  // before the metadata lookup: the common case
  const auto& metadata = ctx.client_metadata();
  auto it = metadata.find("authorization");
  return state.TenantOfAuthorization(it == metadata.end() ? absl::string_view()
                                                          : absl::string_view(it->second.data(), it->second.size()));
}

}  // namespace npu::rpc
