// What the services share: devices, stores, limits and counters.
#pragma once

#include <atomic>
#include <chrono>
#include <string>

#include <grpcpp/server_context.h>

#include "absl/status/statusor.h"
#include "server/graph/plan.h"
#include "server/rpc/device_pool.h"
#include "server/rpc/graph_store.h"
#include "server/rpc/tensor_store.h"

namespace npu::rpc {

struct ServerLimits {
  uint64_t max_message_bytes = uint64_t{1} << 30;  // one gRPC message
  uint64_t max_tensor_bytes = uint64_t{4} << 30;   // one tensor, uploaded or computed
  int64_t max_graph_nodes = 100000;
  uint64_t download_chunk_bytes = uint64_t{1} << 20;
};

struct ServerCounters {
  std::atomic<uint64_t> runs_total{0}, runs_failed{0}, uploads_total{0}, downloads_total{0};
};

struct ServerState {
  ServerState(int device_count, const device::DevicePreset& preset, const device::DeviceOptions& device_options,
              const ServerLimits& limits)
      : devices(device_count, preset, device_options), limits(limits) {}

  // The tenant a call acts for. Without authentication every caller is the
  // anonymous tenant "".
  absl::StatusOr<std::string> TenantOf(const grpc::ServerContext& ctx) const;

  graph::PlanLimits plan_limits() const { return {limits.max_graph_nodes, limits.max_tensor_bytes}; }

  DevicePool devices;
  TensorStore tensors;
  GraphStore graphs;
  const ServerLimits limits;
  ServerCounters counters;
  const std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
};

}  // namespace npu::rpc
