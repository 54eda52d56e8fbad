// The arithmetic of `npu load`, apart from threads and the network so that it
// can be tested on made-up timings: what one request recorded, how a set of
// measured requests becomes a row (throughput, latency percentiles, server
// time from the profiles), and when measurement windows count as stable.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace npu::client::cli {

// One measured request. Times are nanoseconds on the load generator's steady
// clock, from any origin common to a step.
struct RequestRecord {
  int64_t sent_ns = 0;      // when it was sent; open loop: when it was due
  int64_t answered_ns = 0;  // when its response (or error) arrived
  int status_code = 0;      // absl::StatusCode; 0 = OK
  // From the response's profile; negative when the run was not profiled.
  float server_compute_us = -1;  // Profile.host_time_us: wall time the server computed
  float device_queue_us = -1;    // Profile.queue_cycles / clock: modeled wait for earlier work
  float device_compute_us = -1;  // (total_cycles - queue_cycles) / clock: modeled execution
  // From the response's execution: the rows of the device run it was part of
  // (a dynamic batch's sum); 0 when the server did not say.
  int32_t executed_batch = 0;
};

// One row of the report: a step's measured requests summarized. Every field
// is a number; NaN where it was not measured (no profiles, no stability check).
struct LoadStep {
  int concurrency = 0;
  double rate = 0;      // asked-for requests/s; 0 = closed loop
  int64_t ok = 0;       // successful measured requests
  int64_t errors = 0;   // failed measured requests
  std::map<std::string, int64_t> errors_by_code;
  std::map<std::string, std::string> first_error_message;  // by code; filled by the load runner
  double elapsed_s = 0;   // first measured request sent -> last measured response
  double throughput = 0;  // ok / elapsed_s, requests/s
  double mean_ms = 0, p50_ms = 0, p90_ms = 0, p95_ms = 0, p99_ms = 0, max_ms = 0;  // successful requests
  double server_compute_ms = 0, device_queue_us = 0, device_compute_us = 0;        // means; NaN unprofiled
  // The executed batch sizes the successful requests reported: their mean
  // (NaN when none did) and how many requests saw each size.
  double mean_batch = 0;
  std::map<int64_t, int64_t> batch_sizes;
  int windows = 0;                // measurement windows run
  std::optional<bool> stable;     // with --stability-percentage: whether the last windows agreed
  bool stopped_by_duration = false;  // --duration ended the step before its windows completed
};

// Nearest-rank percentile (p in 0..100) of ascending values; 0 for none.
double Percentile(const std::vector<double>& sorted, double p);

// Summarizes measured requests into a row (concurrency, rate, windows and
// stability are the caller's). Latencies are of successful requests; elapsed
// spans every measured request, failed ones included.
LoadStep Summarize(const std::vector<RequestRecord>& records);

// Whether each of the windows' throughput and mean latency lies within
// `percent` % of the windows' average (perf_analyzer's stability rule); false
// for fewer than two windows or a window without successful requests.
bool WindowsAgree(const std::vector<LoadStep>& windows, double percent);

// "START[:END[:STEP]]", END inclusive, STEP added (perf_analyzer's
// --concurrency-range): "1:8:2" -> 1, 3, 5, 7. Levels from 1 to 4096.
absl::StatusOr<std::vector<int>> ParseConcurrencyRange(const std::string& text);

// "1,4,16,64": each a level from 1 to 4096.
absl::StatusOr<std::vector<int>> ParseConcurrencyList(const std::string& text);

}  // namespace npu::client::cli
