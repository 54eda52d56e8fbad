// The one place where internal absl::Status becomes the gRPC status on the wire.
#pragma once

#include <cstddef>

#include <grpcpp/support/status.h>

#include "absl/status/status.h"

namespace npu::rpc {

// The most a status message takes on the wire (percent-encoded, as gRPC sends
// it in trailing metadata). Clients refuse metadata over 8 KiB by default and
// then report "metadata size exceeds limit" instead of the error, so a longer
// message is cut in the middle (graph::BoundedMessage), keeping the culprit at
// its start and the reason at its end. Callers log the whole message first
// (core::RequestLog::Finish).
inline constexpr size_t kMaxStatusMessageBytes = 4096;

grpc::Status ToGrpcStatus(const absl::Status& s);

}  // namespace npu::rpc
