// What every request is served with: devices, stores (tensors, graphs,
// trainers), the model registry, limits, admission and counters.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/graph/plan.h"
#include "server/core/auth_tokens.h"
#include "server/core/device_pool.h"
#include "server/core/graph_store.h"
#include "server/core/inference_metrics.h"
#include "server/core/memory_returner.h"
#include "server/core/model_batchers.h"
#include "server/core/model_registry.h"
#include "server/core/tensor_store.h"
#include "server/core/trainer_store.h"
#include "server/core/work_pool.h"

namespace npu::core {

struct ServerLimits {
  uint64_t max_message_bytes = uint64_t{1} << 30;  // one gRPC message
  uint64_t max_tensor_bytes = uint64_t{4} << 30;   // one tensor, uploaded or computed
  int64_t max_graph_nodes = 100000;
  // Plans a registered graph keeps: one per (preset, bound input shapes) for a
  // graph with dynamic dims; the least recently used goes past this.
  size_t max_plans_per_graph = 8;
  // Largest model RegisterGraph(Stream) accepts (protobuf parses at most 2 GiB).
  uint64_t max_model_bytes = (uint64_t{2} << 30) - 1;
  uint64_t download_chunk_bytes = uint64_t{1} << 20;
  // Trainers a tenant may hold at once (TrainingService): each keeps its
  // model's parameters and optimizer state on every device it trains on.
  size_t max_trainers_per_tenant = 16;
  // Calls that wait (training steps, model imports) served at once, on the
  // work pool (work_pool.h); more wait in line.
  size_t blocking_calls = 64;
  uint64_t tenant_memory_quota_bytes = 0;          // device memory per tenant; 0 = none
  std::chrono::nanoseconds handle_idle_timeout{0}; // 0 = handles never expire
  // A device held longer than this by one run counts as wedged: health reports
  // NOT_SERVING until it is released (0 = no watchdog).
  std::chrono::nanoseconds device_watchdog{std::chrono::seconds(300)};
};

struct ServerCounters {
  std::atomic<uint64_t> runs_total{0}, runs_failed{0}, uploads_total{0}, downloads_total{0};
  std::atomic<uint64_t> runs_cancelled{0};  // caller gave up (deadline, cancellation) before the end
  std::atomic<int64_t> runs_in_flight{0};   // admitted and not yet answered
};

struct ServerState {
  ServerState(int device_count, const device::DevicePreset& preset, const device::DeviceOptions& device_options,
              const ServerLimits& limits)
      : devices(device_count, preset, device_options),
        tensors(TensorStoreOptions{limits.tenant_memory_quota_bytes, limits.handle_idle_timeout}),
        trainers(limits.max_trainers_per_tenant),
        limits(limits),
        work(limits.blocking_calls) {}

  // The tenant a call acts for, from the value of its "authorization" header
  // or metadata ("" when absent). Without authentication every caller is the
  // anonymous tenant ""; with it, the tenant of the call's bearer token
  // (UNAUTHENTICATED when there is none or it is unknown).
  absl::StatusOr<std::string> TenantOfAuthorization(absl::string_view authorization) const;

  // UNAVAILABLE once the server drains (SIGTERM): new work goes elsewhere.
  absl::Status CheckAdmitting() const;

  // True when `device` has been held past limits.device_watchdog.
  bool Wedged(const device::DeviceStatsSnapshot& device) const {
    return limits.device_watchdog.count() > 0 && device.held_for > limits.device_watchdog;
  }

  graph::PlanLimits plan_limits() const { return {limits.max_graph_nodes, limits.max_tensor_bytes}; }

  DevicePool devices;
  TensorStore tensors;
  GraphStore graphs;
  ModelRegistry models{graphs};  // what model names mean: the repository, then registered graphs
  TrainerStore trainers;
  const ServerLimits limits;
  std::unique_ptr<const AuthTokens> auth;  // null: authentication off
  ServerCounters counters;
  InferenceMetrics inference_metrics;  // Triton's, per model version
  std::atomic<bool> draining{false};
  WorkPool work;  // what calls that wait run on; joined before the stores above go
  // The server's watcher that gives freed memory back (null in tests that
  // build a state alone); work that frees much at once asks it to look now.
  MemoryReturner* memory_returner = nullptr;
  const std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  // Last, so it goes first: a batcher's runs use the devices and stores above.
  ModelBatchers batchers;
};

}  // namespace npu::core
