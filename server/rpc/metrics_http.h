// Prometheus metrics over HTTP (server/http): GET /metrics. Off unless
// --metrics_listen is given; meant for loopback or a cluster-internal port.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "server/http/http_server.h"
#include "server/core/server_state.h"

namespace npu::rpc {

// Request metrics plus the gauges read from `state` at scrape time: queue
// depth, device memory, runs in flight, per-unit utilisation.
std::string RenderMetrics(const core::ServerState& state);

class MetricsHttpServer {
 public:
  // `listen` is HOST:PORT; port 0 picks a free one (see port()).
  static absl::StatusOr<std::unique_ptr<MetricsHttpServer>> Start(const std::string& listen,
                                                                   const core::ServerState& state);
  int port() const { return http_->port(); }

 private:
  MetricsHttpServer() = default;

  std::unique_ptr<http::HttpServer> http_;  // stops serving and joins when destroyed
};

}  // namespace npu::rpc
