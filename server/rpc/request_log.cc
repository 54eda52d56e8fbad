#include "server/rpc/request_log.h"

#include <cstdio>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace npu::rpc {
namespace {
std::atomic<uint64_t> next_id{1};
std::atomic<bool> enabled{true};
}  // namespace

void RequestLog::SetEnabled(bool on) { enabled.store(on); }

RequestLog::RequestLog(const char* method)
    : method_(method), id_(next_id.fetch_add(1)), start_(std::chrono::steady_clock::now()) {}

absl::Status RequestLog::Finish(absl::Status status) {
  if (!enabled.load()) return status;
  const double latency_us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start_).count();
  std::string line = absl::StrFormat("ts=%s level=%s req=%d tenant=%s method=%s status=%s latency_us=%.0f",
                                     absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(), absl::UTCTimeZone()),
                                     status.ok() ? "info" : "warn", id_, tenant_.empty() ? "-" : tenant_, method_,
                                     absl::StatusCodeToString(status.code()), latency_us);
  if (device_us_ >= 0) absl::StrAppendFormat(&line, " device_us=%.3f", device_us_);
  if (!status.ok()) {
    absl::StrAppend(&line, " msg=\"", absl::StrReplaceAll(status.message(), {{"\"", "'"}, {"\n", " "}}), "\"");
  }
  line += '\n';
  std::fputs(line.c_str(), stderr);
  return status;
}

}  // namespace npu::rpc
