// Builds the gRPC channel a Client talks through.
#pragma once

#include <memory>
#include <string>

#include <grpcpp/channel.h>

#include "absl/status/statusor.h"
#include "client/client_options.h"

namespace npu::client {

// The service config JSON: load-balancing policy and, when enabled, a retry
// policy for UNAVAILABLE on every npuserve service and health.
std::string MakeServiceConfigJson(const ClientOptions& options);

// Does not wait for the server: connection happens on the first call.
absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeChannel(const std::string& target,
                                                           const ClientOptions& options);

}  // namespace npu::client
