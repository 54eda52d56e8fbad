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
// on a shared 2-core machine moves one sample, not the answer. And no other
// test runs meanwhile: ctest runs this folder's tests alone (RUN_SERIAL), since
// a test computing beside it takes CPU from the long window only.
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

  auto throughput = [&](int64_t requests) {
    LoadCommandArgs args;
    args.concurrency = {2};
    args.requests = requests;
    args.warmup = 200;
    args.duration_s = 120;
    auto steps = client::cli::RunLoad(**c, request, args, std::cerr);
    EXPECT_TRUE(steps.ok()) << steps.status();
    if (!steps.ok()) return 0.0;
    EXPECT_EQ((*steps)[0].ok, requests);
    return (*steps)[0].throughput;
  };
  // Up to three attempts: a measurement bias (the old tool's was 8x) shows in
  // every one; a burst of other work on the machine rarely in three.
  double ratio = 0;
  for (int attempt = 1; attempt <= 3; ++attempt) {
    std::vector<double> small;
    for (int i = 0; i < 3; ++i) small.push_back(throughput(100));
    const double large = throughput(5000);
    for (int i = 0; i < 2; ++i) small.push_back(throughput(100));
    std::sort(small.begin(), small.end());
    ratio = small[2] / large;
    std::printf("attempt %d: npu load throughput, 100 requests (5 windows): %.1f %.1f %.1f %.1f %.1f req/s, "
                "median %.1f; 5000 requests: %.1f req/s; ratio %.3f\n",
                attempt, small[0], small[1], small[2], small[3], small[4], small[2], large, ratio);
    if (std::abs(ratio - 1.0) <= 0.2) break;
  }
  EXPECT_NEAR(ratio, 1.0, 0.2) << "median throughput of 100-request windows / that of 5,000 requests";
}

}  // namespace
}  // namespace npu
