// `npu devices`: a table of the server's devices.
#pragma once

#include <ostream>

#include "absl/status/status.h"
#include "client/client.h"

namespace npu::client::cli {

void PrintDevices(const npu::v1::ListDevicesResponse& devices, std::ostream& out);
absl::Status RunDevicesCommand(Client& client, std::ostream& out);

}  // namespace npu::client::cli
