// Request counters and latency histograms per method and status, kept for the
// Prometheus endpoint. Every finished request is observed once (by RequestLog).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "base/mutex.h"
#include "absl/strings/string_view.h"

namespace npu::core {

class RequestMetrics {
 public:
  static RequestMetrics& Global();

  void Observe(absl::string_view method, absl::StatusCode code, double latency_s);
  // Prometheus text format: npu_requests_total and npu_request_duration_seconds.
  std::string Render() const;

  // Upper bounds of the latency buckets, seconds.
  static const std::vector<double>& Buckets();

 private:
  struct Series {
    uint64_t count = 0;
    double sum_s = 0;
    std::vector<uint64_t> buckets;  // non-cumulative; rendered cumulative
  };
  mutable Mutex mu_;
  std::map<std::pair<std::string, absl::StatusCode>, Series> series_ ABSL_GUARDED_BY(mu_);
};

}  // namespace npu::core
