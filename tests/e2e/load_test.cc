// `npu load` through its library entry points against real servers: bounded
// steps, every request accounted for, and graphs sent inline behind a target
// that names several replicas (a registered id lives on one replica only).
#include <sstream>

#include <gtest/gtest.h>

#include "client/cli/load_command.h"
#include "client/client.h"
#include "tests/e2e/server_process.h"

namespace npu {
namespace {

using client::cli::LoadCommandArgs;

LoadCommandArgs MlpArgs() {
  LoadCommandArgs args;
  args.graph_path = NPU_SOURCE_DIR "/examples/graphs/mlp.json";
  args.concurrency = {1, 4};
  args.requests = 60;
  args.duration_s = 20;
  args.warmup = 2;
  args.format = "json";
  return args;
}

TEST(LoadCommand, OneServerRegistersOnceAndCountsEveryRequest) {
  testing::ServerProcess server;
  auto c = client::Client::Connect(server.target());
  ASSERT_TRUE(c.ok());
  LoadCommandArgs args = MlpArgs();
  EXPECT_FALSE(client::cli::SendsGraphInline(**c, args));
  auto request = client::cli::PrepareLoadRequest(**c, args);
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_FALSE(request->graph_id().empty());
  ASSERT_EQ(request->inputs_size(), 1);  // x, random of the declared type
  EXPECT_EQ(request->inputs(0).tensor().data().size(), 4u * 64u * 2u);
  auto steps = client::cli::RunLoad(**c, *request, args, std::cerr);
  ASSERT_TRUE(steps.ok()) << steps.status();
  ASSERT_EQ(steps->size(), 2u);
  for (const auto& s : *steps) {
    EXPECT_EQ(s.ok, args.requests) << "concurrency " << s.concurrency;
    EXPECT_TRUE(s.errors.empty());
    EXPECT_LE(s.p50_ms, s.p99_ms);
    EXPECT_LE(s.p99_ms, s.max_ms);
  }
  std::ostringstream out;
  ASSERT_TRUE(client::cli::PrintLoadReport(*steps, "csv", out).ok());
  EXPECT_EQ(out.str().rfind("concurrency,rate,ok,", 0), 0u) << out.str();
}

TEST(LoadCommand, SeveralReplicasGetTheGraphInlineAndAllSucceed) {
  testing::ServerProcess a, b;
  const std::string target = "ipv4:" + a.target() + "," + b.target();
  auto c = client::Client::Connect(target);
  ASSERT_TRUE(c.ok());
  LoadCommandArgs args = MlpArgs();
  EXPECT_TRUE(client::cli::SendsGraphInline(**c, args));
  std::ostringstream out;
  ASSERT_TRUE(client::cli::RunLoadCommand(**c, args, out, std::cerr).ok());
  EXPECT_EQ(out.str().find("\"errors\": {}"), out.str().find("\"errors\"")) << out.str();
  EXPECT_EQ(out.str().find("NOT_FOUND"), std::string::npos) << out.str();
  // Both replicas served a share.
  for (auto* s : {&a, &b}) {
    auto one = client::Client::Connect(s->target());
    ASSERT_TRUE(one.ok());
    auto stats = (*one)->GetStats();
    ASSERT_TRUE(stats.ok());
    EXPECT_GT(stats->runs_total(), 10u) << s->target();
  }
}

TEST(LoadCommand, RefusesUnboundedOrMalformedLoads) {
  EXPECT_FALSE(client::cli::ParseConcurrencyList("0").ok());
  EXPECT_FALSE(client::cli::ParseConcurrencyList("1,x").ok());
  testing::ServerProcess server;
  auto c = client::Client::Connect(server.target());
  ASSERT_TRUE(c.ok());
  LoadCommandArgs args = MlpArgs();
  args.duration_s = 0;
  auto request = client::cli::PrepareLoadRequest(**c, args);
  ASSERT_TRUE(request.ok());
  EXPECT_FALSE(client::cli::RunLoad(**c, *request, args, std::cerr).ok());
}

}  // namespace
}  // namespace npu
