// npu load's arithmetic on made-up timings, where the right answers are known.
#include "client/cli/load_measurement.h"

#include <cmath>
#include <map>
#include <vector>

#include <gtest/gtest.h>

namespace npu::client::cli {
namespace {

constexpr int64_t kMs = 1000000;  // ns

// `n` requests, one every `gap_ms`, each answered `latency_ms` after it was sent.
std::vector<RequestRecord> Evenly(int n, double gap_ms, double latency_ms, int64_t start_ns = 5 * kMs) {
  std::vector<RequestRecord> records;
  for (int i = 0; i < n; ++i) {
    RequestRecord r;
    r.sent_ns = start_ns + static_cast<int64_t>(i * gap_ms * kMs);
    r.answered_ns = r.sent_ns + static_cast<int64_t>(latency_ms * kMs);
    records.push_back(r);
  }
  return records;
}

TEST(Summarize, ElapsedRunsFromTheFirstSentToTheLastAnswered) {
  // 100 requests 1 ms apart, 4 ms each: sent over 99 ms, the last answered at 103 ms.
  const LoadStep s = Summarize(Evenly(100, 1.0, 4.0));
  EXPECT_EQ(s.ok, 100);
  EXPECT_EQ(s.errors, 0);
  EXPECT_DOUBLE_EQ(s.elapsed_s, 0.103);
  EXPECT_DOUBLE_EQ(s.throughput, 100 / 0.103);
  EXPECT_DOUBLE_EQ(s.mean_ms, 4.0);
  EXPECT_DOUBLE_EQ(s.p99_ms, 4.0);
  EXPECT_TRUE(std::isnan(s.server_compute_ms)) << "no profiles: not measured, not 0";
}

TEST(Summarize, PercentilesAreNearestRankOverSuccessfulRequests) {
  std::vector<RequestRecord> records = Evenly(100, 1.0, 1.0);
  for (int i = 0; i < 100; ++i) records[i].answered_ns = records[i].sent_ns + (i + 1) * kMs;  // 1..100 ms
  RequestRecord failed;
  failed.sent_ns = 1 * kMs;  // the earliest request, failed: counts for elapsed, not for latency
  failed.answered_ns = 2 * kMs;
  failed.status_code = 14;  // UNAVAILABLE
  records.push_back(failed);
  const LoadStep s = Summarize(records);
  EXPECT_EQ(s.ok, 100);
  EXPECT_EQ(s.errors, 1);
  EXPECT_EQ(s.errors_by_code.at("UNAVAILABLE"), 1);
  EXPECT_DOUBLE_EQ(s.p50_ms, 50);
  EXPECT_DOUBLE_EQ(s.p90_ms, 90);
  EXPECT_DOUBLE_EQ(s.p95_ms, 95);
  EXPECT_DOUBLE_EQ(s.p99_ms, 99);
  EXPECT_DOUBLE_EQ(s.max_ms, 100);
  EXPECT_DOUBLE_EQ(s.mean_ms, 50.5);
  EXPECT_DOUBLE_EQ(s.elapsed_s, (records[99].answered_ns - 1 * kMs) * 1e-9);
}

TEST(Summarize, ServerTimesAreMeansOfTheProfiledRequests) {
  std::vector<RequestRecord> records = Evenly(4, 1.0, 2.0);
  for (int i = 0; i < 3; ++i) {
    records[i].server_compute_us = 100.0f * (i + 1);  // 100, 200, 300
    records[i].device_queue_us = 1.0f * i;            // 0, 1, 2
    records[i].device_compute_us = 10.0f;
  }
  const LoadStep s = Summarize(records);  // the fourth carries no profile
  EXPECT_DOUBLE_EQ(s.server_compute_ms, 0.2);
  EXPECT_DOUBLE_EQ(s.device_queue_us, 1.0);
  EXPECT_DOUBLE_EQ(s.device_compute_us, 10.0);
}

TEST(Summarize, ExecutedBatchSizesAreCountedPerSuccessfulRequest) {
  std::vector<RequestRecord> records = Evenly(6, 1.0, 2.0);
  const int32_t sizes[] = {16, 16, 8, 8, 0, 4};  // the fifth: the server did not say
  for (int i = 0; i < 6; ++i) records[i].executed_batch = sizes[i];
  records[3].status_code = 14;  // failed: no size counts
  const LoadStep s = Summarize(records);
  EXPECT_EQ(s.batch_sizes, (std::map<int64_t, int64_t>{{4, 1}, {8, 1}, {16, 2}}));
  EXPECT_DOUBLE_EQ(s.mean_batch, (16 + 16 + 8 + 4) / 4.0);
  EXPECT_TRUE(std::isnan(Summarize(Evenly(3, 1.0, 2.0)).mean_batch)) << "no sizes reported: not measured";
}

TEST(Summarize, ThroughputDoesNotDependOnHowManyRequestsOfASteadyStream) {
  // C callers back to back against a server answering one request per ms:
  // the old tool's bias (elapsed rounded to 0.1 s, warm-up included) made
  // 100 requests look 8x slower than 5,000; a window must not.
  auto closed_loop = [](int n, int callers) {
    std::vector<RequestRecord> records;
    for (int i = 0; i < n; ++i) {
      RequestRecord r;
      r.answered_ns = (i + callers) * kMs;  // the server finishes one per ms
      r.sent_ns = r.answered_ns - callers * kMs;  // each waited behind the other callers
      records.push_back(r);
    }
    return Summarize(records);
  };
  const double small = closed_loop(100, 4).throughput, large = closed_loop(5000, 4).throughput;
  EXPECT_NEAR(large, 1000, 1);
  EXPECT_GT(small / large, 0.95);  // 100 / (99 + 4) ms
}

TEST(WindowsAgree, WithinThePercentageOfTheAverage) {
  auto window = [](double throughput, double mean_ms) {
    LoadStep w;
    w.ok = 100;
    w.throughput = throughput;
    w.mean_ms = mean_ms;
    return w;
  };
  EXPECT_TRUE(WindowsAgree({window(1000, 2.0), window(1050, 2.1), window(980, 1.95)}, 10));
  EXPECT_FALSE(WindowsAgree({window(1000, 2.0), window(1300, 2.0), window(1000, 2.0)}, 10)) << "throughput";
  EXPECT_FALSE(WindowsAgree({window(1000, 2.0), window(1000, 2.6), window(1000, 2.0)}, 10)) << "latency";
  EXPECT_TRUE(WindowsAgree({window(1000, 2.0), window(1300, 2.0), window(1000, 2.0)}, 20));
  EXPECT_FALSE(WindowsAgree({window(1000, 2.0)}, 50)) << "one window proves nothing";
  LoadStep failed = window(0, 0);
  failed.ok = 0;
  EXPECT_FALSE(WindowsAgree({failed, failed, failed}, 50));
}

TEST(ConcurrencyLevels, RangeAndList) {
  EXPECT_EQ(*ParseConcurrencyRange("1:8:2"), (std::vector<int>{1, 3, 5, 7}));
  EXPECT_EQ(*ParseConcurrencyRange("4:6"), (std::vector<int>{4, 5, 6}));
  EXPECT_EQ(*ParseConcurrencyRange("16"), (std::vector<int>{16}));
  EXPECT_EQ(*ParseConcurrencyRange("1:4096:2147483647"), (std::vector<int>{1}));
  for (const char* bad : {"0", "8:4", "1:8:0", "1:5000", "a:b", "1:2:3:4", "", "1:"}) {
    EXPECT_FALSE(ParseConcurrencyRange(bad).ok()) << bad;
  }
  EXPECT_EQ(*ParseConcurrencyList("1,4, 16,64"), (std::vector<int>{1, 4, 16, 64}));
  for (const char* bad : {"0", "1,x", "", "4097"}) EXPECT_FALSE(ParseConcurrencyList(bad).ok()) << bad;
}

}  // namespace
}  // namespace npu::client::cli
