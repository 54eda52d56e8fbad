#include "server/rpc/kserve_server_info.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "version/version.h"

namespace npu::rpc {

absl::Status KserveServerReadiness(const core::ServerState& state) {
  if (auto s = state.CheckAdmitting(); !s.ok()) return s;
  for (const auto& d : state.devices.devices()) {
    if (state.Wedged(d->Stats())) {
      return absl::UnavailableError(absl::StrCat(d->id(), " has been held by one run past --device_watchdog_s"));
    }
  }
  return absl::OkStatus();
}

inference::ServerMetadataResponse KserveServerMetadata() {
  inference::ServerMetadataResponse out;
  out.set_name("npuserve");
  out.set_version(std::string(ProjectVersion()));
  for (const char* e : {"model_repository", "binary_tensor_data", "parameters"}) out.add_extensions(e);
  return out;
}

}  // namespace npu::rpc
