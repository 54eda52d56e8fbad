// One structured log line per request, written to stderr when the call ends:
//   ts=... level=warn req=42 tenant=- method=Run status=INVALID_ARGUMENT latency_us=812 msg="..."
// Failed requests (warn) and server faults (error) are logged by default;
// successful ones (info) only when asked, since a load test makes millions.
// Every request is counted in RequestMetrics whatever the level.
#pragma once

#include <atomic>
#include <chrono>
#include <string>

#include "absl/status/status.h"

namespace npu::core {

class RequestLog {
 public:
  explicit RequestLog(const char* method);
  void set_tenant(std::string tenant) { tenant_ = std::move(tenant); }
  void set_device_us(double us) { device_us_ = us; }
  // Writes the line and passes `status` through.
  absl::Status Finish(absl::Status status);

  // Lines below this level are not written: "debug", "info" (successes),
  // "warn" (failed requests; the default), "error" (server faults: INTERNAL,
  // UNKNOWN, DATA_LOSS) or "off".
  static absl::Status SetLevel(const std::string& level);
  // Lowers the level to "info" (from any higher level, "off" included).
  static void LogEveryRequest();

 private:
  const char* method_;
  uint64_t id_;
  std::string tenant_;
  double device_us_ = -1;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace npu::core
