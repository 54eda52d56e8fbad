#include "server/core/request_log.h"

#include <cstdio>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "server/core/request_metrics.h"

namespace npu::core {
namespace {
enum Level { kDebug, kInfo, kWarn, kError, kOff };
constexpr const char* kLevelNames[] = {"debug", "info", "warn", "error", "off"};

std::atomic<uint64_t> next_id{1};
std::atomic<int> min_level{kWarn};

Level LevelOf(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk: return kInfo;
    case absl::StatusCode::kInternal:
    case absl::StatusCode::kUnknown:
    case absl::StatusCode::kDataLoss: return kError;
    default: return kWarn;
  }
}
}  // namespace

void RequestLog::LogEveryRequest() {
  if (min_level.load() > kInfo) min_level.store(kInfo);
}

absl::Status RequestLog::SetLevel(const std::string& level) {
  for (int l = kDebug; l <= kOff; ++l) {
    if (level == kLevelNames[l]) {
      min_level.store(l);
      return absl::OkStatus();
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("--log_level \"", level, "\" is not one of debug, info, warn, error, off"));
}

RequestLog::RequestLog(const char* method)
    : method_(method), id_(next_id.fetch_add(1)), start_(std::chrono::steady_clock::now()) {}

absl::Status RequestLog::Finish(absl::Status status) {
  const double latency_us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start_).count();
  RequestMetrics::Global().Observe(method_, status.code(), latency_us * 1e-6);
  const Level level = LevelOf(status.code());
  if (level < min_level.load()) return status;
  std::string line = absl::StrFormat("ts=%s level=%s req=%d tenant=%s method=%s status=%s latency_us=%.0f",
                                     absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(), absl::UTCTimeZone()),
                                     kLevelNames[level], id_, tenant_.empty() ? "-" : tenant_, method_,
                                     absl::StatusCodeToString(status.code()), latency_us);
  if (device_us_ >= 0) absl::StrAppendFormat(&line, " device_us=%.3f", device_us_);
  if (!status.ok()) {
    absl::StrAppend(&line, " msg=\"", absl::StrReplaceAll(status.message(), {{"\"", "'"}, {"\n", " "}}), "\"");
  }
  line += '\n';
  std::fputs(line.c_str(), stderr);
  return status;
}

}  // namespace npu::core
