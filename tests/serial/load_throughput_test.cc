// Throughput measured by `npu load` does not depend on how many requests
// measured it. It measures time, so it runs alone (tests/CMakeLists.txt).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include <gtest/gtest.h>

#include "client/cli/load_command.h"
#include "client/client.h"
#include "client/graph_builder.h"
#include "client/host_tensor.h"
#include "tests/e2e/server_process.h"

namespace npu {
namespace {

using client::cli::LoadCommandArgs;

// The CI check of issue 16: on a steady server, a window of 100 requests and
// one of 5,000 give the same throughput within 20%. Steady means: one device
// whose run is compute-bound (a 256^3 fp16 MatMul, ~1 ms with one thread),
// closed loop at the same concurrency (2: one run computes while the other
// caller's request travels), 200 warm-up requests before every window
// (connections, handler threads, the allocator), and the 100-request windows
// taken five times around the long one, median, so that a burst of other work
// on a shared 2-core machine moves one sample, not the answer. No other test
// runs meanwhile: ctest runs this folder's tests alone (RUN_SERIAL), since a
// test computing beside it would take CPU from some windows and not others.
TEST(LoadThroughput, ThroughputOf100And5000RequestsAgreeOnASteadyServer) {
  testing::ServerProcess server({"--threads=1"});
  auto c = client::Client::Connect(server.target());
  ASSERT_TRUE(c.ok());
  constexpr int64_t kN = 256;
  client::GraphBuilder g("mm256");
  auto w = client::MakeFloatTensor(v1::FLOAT16, {kN, kN}, std::vector<float>(kN * kN, 0.01f));
  ASSERT_TRUE(w.ok());
  g.Output(g.MatMul(g.Input("x", v1::FLOAT16, {kN, kN}), g.Constant("w", *w)), "y");
  v1::RegisterGraphRequest reg;
  *reg.mutable_graph() = g.Build();
  auto registered = (*c)->RegisterGraph(reg);
  ASSERT_TRUE(registered.ok()) << registered.status();
  v1::RunRequest request;
  request.set_graph_id(registered->graph_id());
  request.mutable_options()->set_profile(true);
  v1::RunInput* x = request.add_inputs();
  x->set_name("x");
  *x->mutable_tensor() = *client::MakeFloatTensor(v1::FLOAT16, {kN, kN}, std::vector<float>(kN * kN, 0.5f));

  auto measure = [&](int64_t requests) {
    LoadCommandArgs args;
    args.concurrency = {2};
    args.requests = requests;
    args.warmup = 200;
    args.duration_s = 120;
    auto steps = client::cli::RunLoad(**c, request, args, std::cerr);
    EXPECT_TRUE(steps.ok()) << steps.status();
    if (!steps.ok()) return client::cli::LoadStep{};
    EXPECT_EQ((*steps)[0].ok, requests);
    return (*steps)[0];
  };
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  // Whether the server was steady is read from latency, which every request
  // measures by itself: closed loop at the same concurrency, a steady server
  // answers as fast in a short window as in a long one. A wrong elapsed time
  // (the old tool's bias was 8x) moves throughput and leaves latency alone; a
  // burst of other work on the machine moves both. So an attempt whose mean
  // latencies agree within 15% must have throughputs within 20%; an attempt
  // where they do not measured a machine that changed, and is taken again (at
  // most three times; if the machine never holds still, the check is skipped).
  for (int attempt = 1; attempt <= 3; ++attempt) {
    std::vector<client::cli::LoadStep> small;
    for (int i = 0; i < 3; ++i) small.push_back(measure(100));
    const client::cli::LoadStep large = measure(5000);
    for (int i = 0; i < 2; ++i) small.push_back(measure(100));
    std::vector<double> throughputs, latencies;
    for (const auto& s : small) {
      throughputs.push_back(s.throughput);
      latencies.push_back(s.mean_ms);
    }
    const double ratio = median(throughputs) / large.throughput;
    const double latency_ratio = median(latencies) / large.mean_ms;
    std::printf("attempt %d: npu load, 100 requests (5 windows): %.1f %.1f %.1f %.1f %.1f req/s, median %.1f, "
                "mean latency %.3f ms; 5000 requests: %.1f req/s, %.3f ms; throughput ratio %.3f, latency ratio "
                "%.3f\n",
                attempt, throughputs[0], throughputs[1], throughputs[2], throughputs[3], throughputs[4],
                median(throughputs), median(latencies), large.throughput, large.mean_ms, ratio, latency_ratio);
    if (std::abs(latency_ratio - 1.0) > 0.15) continue;  // the machine changed under the measurement
    EXPECT_NEAR(ratio, 1.0, 0.2) << "median throughput of 100-request windows / that of 5,000 requests, with "
                                    "latencies that agree (ratio "
                                 << latency_ratio << ")";
    return;
  }
  GTEST_SKIP() << "the machine was not steady in three attempts (mean latency moved by more than 15% between "
                  "the 100- and 5,000-request windows); nothing to compare";
}

}  // namespace
}  // namespace npu
