#include "server/rpc/metrics_http.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "server/core/request_metrics.h"

namespace npu::rpc {
namespace {

double Ratio(uint64_t busy, uint64_t span) { return span == 0 ? 0.0 : static_cast<double>(busy) / span; }

void Gauge(std::string& out, const char* name, const char* help) {
  absl::StrAppend(&out, "# HELP ", name, " ", help, "\n# TYPE ", name, " gauge\n");
}

}  // namespace

std::string RenderMetrics(const core::ServerState& state) {
  std::string out = core::RequestMetrics::Global().Render();
  out += state.inference_metrics.Render(state.batchers.Queued());
  const auto& devices = state.devices.devices();
  std::vector<device::DeviceStatsSnapshot> stats;
  for (const auto& d : devices) stats.push_back(d->Stats());

  Gauge(out, "npu_runs_in_flight", "Runs admitted and not yet answered.");
  absl::StrAppend(&out, "npu_runs_in_flight ", state.counters.runs_in_flight.load(), "\n");
  absl::StrAppend(&out, "# HELP npu_runs_cancelled_total Runs stopped because the caller gave up.\n"
                        "# TYPE npu_runs_cancelled_total counter\n");
  absl::StrAppend(&out, "npu_runs_cancelled_total ", state.counters.runs_cancelled.load(), "\n");
  Gauge(out, "npu_draining", "1 while the server drains before exiting.");
  absl::StrAppend(&out, "npu_draining ", state.draining.load() ? 1 : 0, "\n");

  Gauge(out, "npu_device_queue_depth", "Runs waiting for the device.");
  for (size_t i = 0; i < devices.size(); ++i) {
    absl::StrAppend(&out, "npu_device_queue_depth{device=\"", devices[i]->id(), "\"} ", stats[i].queue_depth, "\n");
  }
  Gauge(out, "npu_device_memory_used_bytes", "Simulated device memory held by handles.");
  for (size_t i = 0; i < devices.size(); ++i) {
    absl::StrAppend(&out, "npu_device_memory_used_bytes{device=\"", devices[i]->id(), "\"} ", stats[i].memory_used,
                    "\n");
  }
  Gauge(out, "npu_device_memory_capacity_bytes", "Simulated device memory.");
  for (const auto& d : devices) {
    absl::StrAppend(&out, "npu_device_memory_capacity_bytes{device=\"", d->id(), "\"} ", d->preset().hbm_bytes, "\n");
  }
  absl::StrAppend(&out, "# HELP npu_device_runs_total Runs executed by the device.\n"
                        "# TYPE npu_device_runs_total counter\n");
  for (size_t i = 0; i < devices.size(); ++i) {
    absl::StrAppend(&out, "npu_device_runs_total{device=\"", devices[i]->id(), "\"} ", stats[i].runs, "\n");
  }
  Gauge(out, "npu_device_unit_utilization",
        "Busy cycles / (modeled timeline cycles x cores), per Da Vinci unit, since start.");
  for (size_t i = 0; i < devices.size(); ++i) {
    const device::DeviceStatsSnapshot& s = stats[i];
    const uint64_t span = s.timeline_cycles * static_cast<uint64_t>(s.cores);
    const std::pair<const char*, uint64_t> units[] = {
        {"cube", s.busy.cube}, {"vector", s.busy.vector}, {"scalar", s.busy.scalar}, {"mte1", s.busy.mte1},
        {"mte2", s.busy.mte2}, {"mte3", s.busy.mte3},     {"fixpipe", s.busy.fixpipe}};
    for (const auto& [unit, busy] : units) {
      absl::StrAppendFormat(&out, "npu_device_unit_utilization{device=\"%s\",unit=\"%s\"} %.6f\n", devices[i]->id(),
                            unit, Ratio(busy, span));
    }
  }
  return out;
}

absl::StatusOr<std::unique_ptr<MetricsHttpServer>> MetricsHttpServer::Start(const std::string& listen,
                                                                           const core::ServerState& state) {
  http::HttpServerOptions options;
  options.listen = listen;
  options.flag = "--metrics_listen";
  options.threads = 2;  // scrapes are few and quick
  options.limits.max_body_bytes = 1 << 16;
  auto http = http::HttpServer::Start(std::move(options), [&state](const http::HttpRequest& req,
                                                                    http::HttpResponse& res) {
    if ((req.method == "GET" || req.method == "HEAD") && req.path == "/metrics") {
      res.body = RenderMetrics(state);
      res.content_type = "text/plain; version=0.0.4";
    } else {
      res.status = 404;
      res.content_type = "text/plain";
      res.body = "not found: the metrics are at GET /metrics\n";
    }
  });
  if (!http.ok()) return http.status();
  std::unique_ptr<MetricsHttpServer> s(new MetricsHttpServer());
  s->http_ = *std::move(http);
  return s;
}

}  // namespace npu::rpc
