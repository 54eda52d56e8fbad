#include "server/core/request_metrics.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace npu::core {

RequestMetrics& RequestMetrics::Global() {
  static RequestMetrics* metrics = new RequestMetrics();  // never destroyed: requests may end during exit
  return *metrics;
}

const std::vector<double>& RequestMetrics::Buckets() {
  // 50 us (a tiny run on loopback) to 30 s (a large model), about 2.5x apart.
  static const std::vector<double> buckets = {5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2,
                                              2.5e-2, 5e-2, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};
  return buckets;
}

void RequestMetrics::Observe(absl::string_view method, absl::StatusCode code, double latency_s) {
  const auto& bounds = Buckets();
  const size_t bucket = std::lower_bound(bounds.begin(), bounds.end(), latency_s) - bounds.begin();
  MutexLock lock(&mu_);
  Series& s = series_[{std::string(method), code}];
  if (s.buckets.empty()) s.buckets.assign(bounds.size() + 1, 0);  // last: +Inf
  ++s.count;
  s.sum_s += latency_s;
  ++s.buckets[bucket];
}

std::string RequestMetrics::Render() const {
  const auto& bounds = Buckets();
  std::string out =
      "# HELP npu_requests_total Requests finished, by method and gRPC status.\n"
      "# TYPE npu_requests_total counter\n";
  std::string hist =
      "# HELP npu_request_duration_seconds Request latency seen by the server, by method and gRPC status.\n"
      "# TYPE npu_request_duration_seconds histogram\n";
  MutexLock lock(&mu_);
  for (const auto& [key, s] : series_) {
    const std::string labels =
        absl::StrCat("method=\"", key.first, "\",status=\"", absl::StatusCodeToString(key.second), "\"");
    absl::StrAppend(&out, "npu_requests_total{", labels, "} ", s.count, "\n");
    uint64_t cumulative = 0;
    for (size_t i = 0; i < bounds.size(); ++i) {
      cumulative += s.buckets[i];
      absl::StrAppendFormat(&hist, "npu_request_duration_seconds_bucket{%s,le=\"%g\"} %d\n", labels, bounds[i],
                            cumulative);
    }
    absl::StrAppendFormat(&hist, "npu_request_duration_seconds_bucket{%s,le=\"+Inf\"} %d\n", labels, s.count);
    absl::StrAppendFormat(&hist, "npu_request_duration_seconds_sum{%s} %.9g\n", labels, s.sum_s);
    absl::StrAppendFormat(&hist, "npu_request_duration_seconds_count{%s} %d\n", labels, s.count);
  }
  return out + hist;
}

}  // namespace npu::core
