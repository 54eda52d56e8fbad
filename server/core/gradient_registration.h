// RegisterGradient: a model's gradient graphs (train/gradient_graphs.h) built
// for the device's preset and registered as two graphs of the tenant, each as
// RegisterGraph registers a Graph (by the hash of its deterministic
// serialization, so the same model and request register the same two graphs
// again, each counted once more).
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "npu/v1/runtime.pb.h"
#include "server/core/server_state.h"

namespace npu::core {

absl::StatusOr<v1::RegisterGradientResponse> RegisterGradient(ServerState& state, const std::string& tenant,
                                                              v1::RegisterGradientRequest& request);

}  // namespace npu::core
