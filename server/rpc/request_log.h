// One structured log line per request, written when the call ends:
// Every request is also counted in RequestMetrics.
//   ts=... level=info req=42 tenant=- method=Run status=OK latency_us=812 device_us=3.1 msg="..."
#pragma once

#include <atomic>
#include <chrono>
#include <string>

#include "absl/status/status.h"

namespace npu::rpc {

class RequestLog {
 public:
  explicit RequestLog(const char* method);
  void set_tenant(std::string tenant) { tenant_ = std::move(tenant); }
  void set_device_us(double us) { device_us_ = us; }
  // Writes the line and passes `status` through.
  absl::Status Finish(absl::Status status);

  static void SetEnabled(bool enabled);
  // Lines below this level are not written: "debug", "info" (successes),
  // "warn" (failed requests), "error" (server faults: INTERNAL, UNKNOWN,
  // DATA_LOSS) or "off". Metrics count every request whatever the level.
  static absl::Status SetLevel(const std::string& level);

 private:
  const char* method_;
  uint64_t id_;
  std::string tenant_;
  double device_us_ = -1;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace npu::rpc
