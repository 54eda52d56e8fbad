// `npu health`: SERVING or NOT_SERVING; the container HEALTHCHECK's probe.
#pragma once

#include <ostream>

#include "absl/status/statusor.h"
#include "client/client.h"

namespace npu::client::cli {

// Prints the serving status name; true only when SERVING.
absl::StatusOr<bool> RunHealthCommand(Client& client, std::ostream& out);

}  // namespace npu::client::cli
