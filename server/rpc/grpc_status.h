// The one place where internal absl::Status becomes the gRPC status on the wire.
#pragma once

#include <grpcpp/support/status.h>

#include "absl/status/status.h"

namespace npu::rpc {

grpc::Status ToGrpcStatus(const absl::Status& s);

}  // namespace npu::rpc
