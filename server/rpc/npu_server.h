// Assembles the gRPC server: services (npu.v1 and KServe v2), health,
// reflection, message limits, TLS and bearer-token auth, the metrics and
// KServe HTTP/REST endpoints, and the drain on shutdown.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include <grpcpp/server.h>

#include "absl/status/statusor.h"
#include "base/mutex.h"
#include "server/rpc/device_service.h"
#include "server/rpc/kserve_http.h"
#include "server/rpc/kserve_service.h"
#include "server/core/memory_returner.h"
#include "server/rpc/memory_service.h"
#include "server/rpc/metrics_http.h"
#include "server/rpc/runtime_service.h"
#include "server/core/server_state.h"
#include "server/rpc/training_service.h"

namespace npu::rpc {

struct TlsConfig {
  std::string cert_path;       // PEM server certificate chain; empty = plaintext
  std::string key_path;        // PEM private key
  std::string client_ca_path;  // PEM CA that client certificates must chain to; set = mutual TLS
};

struct ServerConfig {
  std::string listen = "127.0.0.1:50051";
  int devices = 1;
  std::string preset = "ascend910";
  device::DeviceOptions device_options;
  core::ServerLimits limits;
  TlsConfig tls;
  std::string auth_tokens_path;  // `TOKEN TENANT` lines; empty = no authentication
  std::string metrics_listen;    // HOST:PORT for Prometheus; empty = off
  std::string http_listen;       // HOST:PORT for KServe v2 HTTP/REST; empty = off
  std::string model_repository;  // folder of models served by name (model_repository.h); empty = none
  bool model_repository_follow_symlinks = false;  // follow links that lead out of it (repository_files.h)
  // gRPC handler threads kept waiting for calls. gRPC's default (2) makes every
  // burst of concurrent calls start threads and end them afterwards, which costs
  // more than a small run; idle pollers cost only their stacks.
  int grpc_max_pollers = 64;
  // Threads serving every unary call (async_call_queue.h, unary_call.h). They never
  // wait for a device; small runs execute on them when the device is free.
  int run_threads = 4;
};

class NpuServer {
 public:
  static absl::StatusOr<std::unique_ptr<NpuServer>> Start(const ServerConfig& config);
  ~NpuServer();

  int port() const { return port_; }
  int metrics_port() const { return metrics_ ? metrics_->port() : 0; }
  int http_port() const { return kserve_http_ ? kserve_http_->port() : 0; }
  const core::ServerState& state() const { return state_; }

  // The SIGTERM path: health goes NOT_SERVING, new runs and uploads are refused
  // with UNAVAILABLE, runs in flight finish (waiting at most `timeout`), then
  // the server stops. Returns false when runs were still in flight at the timeout.
  bool Drain(std::chrono::milliseconds timeout);
  // Stops at once: new calls are refused, calls in progress are cancelled.
  void Shutdown();
  void Wait() { server_->Wait(); }

 private:
  NpuServer(ServerConfig config, device::DevicePreset preset);

  ServerConfig config_;
  core::ServerState state_;
  DeviceServiceImpl device_service_{state_};
  MemoryServiceImpl memory_service_{state_};
  RuntimeServiceImpl runtime_service_{state_};
  TrainingServiceImpl training_service_{state_};
  KserveServiceImpl kserve_service_{state_};
  // Every unary call. Declared before server_, so destroyed after it (and
  // before the services its calls use); stopped (Shutdown, Drain) once the
  // server has shut down.
  UnaryMethods unary_methods_;
  std::unique_ptr<AsyncCallQueue> async_calls_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<MetricsHttpServer> metrics_;
  std::unique_ptr<KserveHttpServer> kserve_http_;
  int port_ = 0;

  // The watchdog: health follows the devices (NOT_SERVING while one is wedged).
  void WatchDevices();
  Mutex watch_mu_;
  CondVar watch_cv_;
  bool watch_stop_ ABSL_GUARDED_BY(watch_mu_) = false;
  std::thread watchdog_;
  std::unique_ptr<core::MemoryReturner> memory_returner_;
};

}  // namespace npu::rpc
