// The one place where gRPC statuses become absl statuses on the client side.
#pragma once

#include <grpcpp/support/status.h>

#include "absl/status/status.h"

namespace npu::client {

// Keeps the code and the message; the two enums share their numbering.
absl::Status FromGrpcStatus(const grpc::Status& status);

}  // namespace npu::client
