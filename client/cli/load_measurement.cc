#include "client/cli/load_measurement.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "client/cli/cli_status.h"

namespace npu::client::cli {
namespace {

constexpr int kMaxConcurrency = 4096;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

absl::Status BadLevels(const std::string& option, absl::string_view text, absl::string_view why) {
  return UsageError(absl::InvalidArgumentError(absl::StrCat(option, " \"", text, "\": ", why)));
}

// Mean of the non-negative values; NaN when there are none.
double MeanOfMeasured(double sum, int64_t count) { return count > 0 ? sum / count : kNaN; }

}  // namespace

double Percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * sorted.size()));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

LoadStep Summarize(const std::vector<RequestRecord>& records) {
  LoadStep step;
  if (records.empty()) return step;
  int64_t first_sent = std::numeric_limits<int64_t>::max(), last_answered = std::numeric_limits<int64_t>::min();
  std::vector<double> latencies_ms;
  latencies_ms.reserve(records.size());
  double compute_sum = 0, queue_sum = 0, device_sum = 0;
  int64_t profiled = 0;
  for (const RequestRecord& r : records) {
    first_sent = std::min(first_sent, r.sent_ns);
    last_answered = std::max(last_answered, r.answered_ns);
    if (r.status_code != 0) {
      ++step.errors;
      ++step.errors_by_code[absl::StatusCodeToString(static_cast<absl::StatusCode>(r.status_code))];
      continue;
    }
    latencies_ms.push_back(static_cast<double>(r.answered_ns - r.sent_ns) * 1e-6);
    if (r.executed_batch > 0) ++step.batch_sizes[r.executed_batch];
    if (r.server_compute_us >= 0) {
      ++profiled;
      compute_sum += r.server_compute_us;
      queue_sum += r.device_queue_us;
      device_sum += r.device_compute_us;
    }
  }
  step.ok = static_cast<int64_t>(latencies_ms.size());
  step.elapsed_s = static_cast<double>(last_answered - first_sent) * 1e-9;
  step.throughput = step.elapsed_s > 0 ? static_cast<double>(step.ok) / step.elapsed_s : 0;
  std::sort(latencies_ms.begin(), latencies_ms.end());
  double sum = 0;
  for (double v : latencies_ms) sum += v;
  step.mean_ms = latencies_ms.empty() ? 0 : sum / static_cast<double>(latencies_ms.size());
  step.p50_ms = Percentile(latencies_ms, 50);
  step.p90_ms = Percentile(latencies_ms, 90);
  step.p95_ms = Percentile(latencies_ms, 95);
  step.p99_ms = Percentile(latencies_ms, 99);
  step.max_ms = latencies_ms.empty() ? 0 : latencies_ms.back();
  step.server_compute_ms = MeanOfMeasured(compute_sum, profiled) * 1e-3;
  step.device_queue_us = MeanOfMeasured(queue_sum, profiled);
  step.device_compute_us = MeanOfMeasured(device_sum, profiled);
  double batch_sum = 0;
  int64_t batched = 0;
  for (const auto& [size, n] : step.batch_sizes) {
    batch_sum += static_cast<double>(size) * static_cast<double>(n);
    batched += n;
  }
  step.mean_batch = MeanOfMeasured(batch_sum, batched);
  return step;
}

bool WindowsAgree(const std::vector<LoadStep>& windows, double percent) {
  if (windows.size() < 2) return false;
  double throughput = 0, latency = 0;
  for (const LoadStep& w : windows) {
    if (w.ok == 0) return false;
    throughput += w.throughput;
    latency += w.mean_ms;
  }
  throughput /= static_cast<double>(windows.size());
  latency /= static_cast<double>(windows.size());
  const double tolerance = percent / 100.0;
  for (const LoadStep& w : windows) {
    if (std::abs(w.throughput - throughput) > tolerance * throughput) return false;
    if (std::abs(w.mean_ms - latency) > tolerance * latency) return false;
  }
  return true;
}

absl::StatusOr<std::vector<int>> ParseConcurrencyRange(const std::string& text) {
  const std::vector<absl::string_view> parts = absl::StrSplit(text, ':');
  if (parts.size() > 3) return BadLevels("--concurrency-range", text, "want START[:END[:STEP]]");
  int start = 0, end = 0, step = 1;
  if (!absl::SimpleAtoi(parts[0], &start) || start < 1 || start > kMaxConcurrency) {
    return BadLevels("--concurrency-range", text, "START must be a level from 1 to 4096");
  }
  end = start;
  if (parts.size() > 1 && (!absl::SimpleAtoi(parts[1], &end) || end < start || end > kMaxConcurrency)) {
    return BadLevels("--concurrency-range", text, "END must be a level from START to 4096");
  }
  if (parts.size() > 2 && (!absl::SimpleAtoi(parts[2], &step) || step < 1)) {
    return BadLevels("--concurrency-range", text, "STEP must be a whole number >= 1");
  }
  std::vector<int> levels;
  for (int64_t c = start; c <= end; c += step) levels.push_back(static_cast<int>(c));
  return levels;
}

absl::StatusOr<std::vector<int>> ParseConcurrencyList(const std::string& text) {
  std::vector<int> levels;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    int n = 0;
    if (!absl::SimpleAtoi(part, &n) || n < 1 || n > kMaxConcurrency) {
      return BadLevels("--concurrency", part, "not a level from 1 to 4096");
    }
    levels.push_back(n);
  }
  if (levels.empty()) return BadLevels("--concurrency", text, "no level given");
  return levels;
}

}  // namespace npu::client::cli
