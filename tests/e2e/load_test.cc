// `npu load` through its library entry points against real servers: every
// request accounted for, rows as steps end, server time from the profiles,
// stability windows, bounded steps, and graphs sent inline behind a target
// that names several replicas. Throughput consistency is in
// tests/serial/load_throughput_test.cc (it runs alone).
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include <google/protobuf/util/json_util.h>

#include <gtest/gtest.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "client/cli/load_command.h"
#include "client/cli/load_report.h"
#include "client/client.h"
#include "client/graph_builder.h"
#include "client/host_tensor.h"
#include "client/npy.h"
#include "tests/e2e/server_process.h"

namespace npu {
namespace {

using client::cli::LoadCommandArgs;
using client::cli::LoadStep;

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

// Runs `args`, one concurrency level, against a fresh server; the request as
// sent in `request_out` when given.
LoadStep OneStep(const LoadCommandArgs& args, v1::RunRequest* request_out = nullptr) {
  testing::ServerProcess server;
  auto c = client::Client::Connect(server.target());
  EXPECT_TRUE(c.ok());
  if (!c.ok()) return {};
  auto request = client::cli::PrepareLoadRequest(**c, args);
  EXPECT_TRUE(request.ok()) << request.status();
  if (!request.ok()) return {};
  if (request_out != nullptr) *request_out = *request;
  auto steps = client::cli::RunLoad(**c, *request, args, std::cerr);
  EXPECT_TRUE(steps.ok()) << steps.status();
  EXPECT_EQ(steps.ok() ? steps->size() : 0, 1u);
  return steps.ok() && steps->size() == 1 ? steps->front() : LoadStep{};
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
  EXPECT_TRUE(request->options().profile());
  // The modeled time of one run alone on the device, read from its profile:
  // every measured run computes the same, whatever waited before it. The
  // second run's: the first fetches the weights into the L2, where every
  // later run finds them (docs/device-model.md, "L2").
  ASSERT_TRUE((*c)->Run(*request).ok());
  auto alone = (*c)->Run(*request);
  ASSERT_TRUE(alone.ok()) << alone.status();
  const v1::Profile& p = alone->profile();
  const double device_us = static_cast<double>(p.total_cycles() - p.queue_cycles()) / p.clock_mhz();
  int rows_seen = 0;
  auto steps = client::cli::RunLoad(**c, *request, args, std::cerr, [&](const LoadStep& s) {
    EXPECT_EQ(s.concurrency, args.concurrency[rows_seen]) << "a row as each step ends, in order";
    ++rows_seen;
  });
  ASSERT_TRUE(steps.ok()) << steps.status();
  ASSERT_EQ(steps->size(), 2u);
  EXPECT_EQ(rows_seen, 2);
  for (const auto& s : *steps) {
    EXPECT_EQ(s.ok, args.requests) << "concurrency " << s.concurrency;
    EXPECT_EQ(s.errors, 0);
    EXPECT_EQ(s.windows, 1);
    EXPECT_FALSE(s.stable.has_value());
    EXPECT_LE(s.p50_ms, s.p90_ms);
    EXPECT_LE(s.p90_ms, s.p95_ms);
    EXPECT_LE(s.p95_ms, s.p99_ms);
    EXPECT_LE(s.p99_ms, s.max_ms);
    EXPECT_GT(s.elapsed_s, 0);
    EXPECT_NEAR(s.throughput, s.ok / s.elapsed_s, 1e-9);
    // From the profiles: the server's compute time and the modeled device time.
    EXPECT_GT(s.server_compute_ms, 0);
    EXPECT_LT(s.server_compute_ms, s.mean_ms);
    EXPECT_NEAR(s.device_compute_us, device_us, 1e-6 * device_us);  // kept as float per request
    EXPECT_GE(s.device_queue_us, 0);
  }

  // The CSV: a header, then one row of numbers per step.
  std::ostringstream csv, notes;
  client::cli::LoadReportWriter writer("csv", csv, notes);
  for (const auto& s : *steps) writer.Write(s);
  std::vector<std::string> lines = absl::StrSplit(csv.str(), '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u) << csv.str();
  EXPECT_EQ(lines[0].rfind("concurrency,rate,ok,errors,elapsed_s,throughput,mean_ms,p50_ms,p90_ms,p95_ms,", 0), 0u);
  for (size_t i = 1; i < lines.size(); ++i) {
    for (absl::string_view cell : absl::StrSplit(lines[i], ',')) {
      double v = 0;
      EXPECT_TRUE(absl::SimpleAtod(cell, &v)) << "not a number: \"" << cell << "\" in " << lines[i];
    }
  }
  EXPECT_TRUE(notes.str().empty()) << notes.str();
}

TEST(LoadCommand, WithoutProfilesServerColumnsAreNotMeasured) {
  LoadCommandArgs args = MlpArgs();
  args.concurrency = {2};
  args.server_profile = false;
  v1::RunRequest request;
  const LoadStep s = OneStep(args, &request);
  EXPECT_FALSE(request.options().profile());
  EXPECT_EQ(s.ok, args.requests);
  EXPECT_TRUE(std::isnan(s.server_compute_ms));
  std::ostringstream json, notes;
  client::cli::LoadReportWriter("json", json, notes).Write(s);
  EXPECT_NE(json.str().find("\"server_compute_ms\": null"), std::string::npos) << json.str();
  EXPECT_NE(json.str().find("\"errors\": 0,"), std::string::npos) << json.str();
}

TEST(LoadCommand, StabilityWindowsRunUntilTheLastThreeAgreeOrTheLimit) {
  LoadCommandArgs args = MlpArgs();
  args.concurrency = {2};
  args.requests = 50;
  args.stability_percentage = 50;
  args.max_windows = 6;
  const LoadStep s = OneStep(args);
  ASSERT_TRUE(s.stable.has_value());
  EXPECT_GE(s.windows, 3);
  EXPECT_LE(s.windows, 6);
  EXPECT_EQ(s.ok, 3 * args.requests) << "the row covers the last three windows";
  EXPECT_FALSE(s.stopped_by_duration);
}

TEST(LoadCommand, DurationEndsAStepWhateverItsWindows) {
  LoadCommandArgs args = MlpArgs();
  args.concurrency = {2};
  args.requests = 100000000;
  args.duration_s = 0.3;
  const auto start = std::chrono::steady_clock::now();
  const LoadStep s = OneStep(args);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(s.stopped_by_duration);
  EXPECT_EQ(s.windows, 0);
  EXPECT_GT(s.ok, 0) << "the partial window is reported";
  EXPECT_LT(took, 10.0);
  std::ostringstream out, notes;
  client::cli::LoadReportWriter("table", out, notes).Write(s);
  EXPECT_NE(notes.str().find("--duration ended the step"), std::string::npos) << notes.str();
}

TEST(LoadCommand, SeveralReplicasGetTheGraphInlineAndAllSucceed) {
  testing::ServerProcess a, b;
  const std::string target = "ipv4:" + a.target() + "," + b.target();
  auto c = client::Client::Connect(target);
  ASSERT_TRUE(c.ok());
  LoadCommandArgs args = MlpArgs();
  EXPECT_TRUE(client::cli::SendsGraphInline(**c, args));
  std::ostringstream out, notes;
  ASSERT_TRUE(client::cli::RunLoadCommand(**c, args, out, notes).ok());
  const std::vector<std::string> rows = absl::StrSplit(out.str(), '\n', absl::SkipEmpty());
  ASSERT_EQ(rows.size(), 2u) << out.str();
  for (const std::string& row : rows) {
    EXPECT_NE(row.find("\"errors\": 0,"), std::string::npos) << row;
    EXPECT_NE(row.find("\"ok\": 60,"), std::string::npos) << row;
  }
  EXPECT_EQ(notes.str().find("NOT_FOUND"), std::string::npos) << notes.str();
  // Both replicas served a share.
  for (auto* s : {&a, &b}) {
    auto one = client::Client::Connect(s->target());
    ASSERT_TRUE(one.ok());
    auto stats = (*one)->GetStats();
    ASSERT_TRUE(stats.ok());
    EXPECT_GT(stats->runs_total(), 10u) << s->target();
  }
}

// A model of the server's repository by name, batched by its config.pbtxt:
// the rows say which executed batch sizes the responses reported.
TEST(LoadCommand, ByModelNameReportsTheExecutedBatchSizes) {
  char dir[] = "/tmp/npu-load-model.XXXXXX";
  const std::filesystem::path repo = mkdtemp(dir);
  client::GraphBuilder g("mlp");
  std::vector<float> w(64 * 32, 0.25f);
  auto weights = client::MakeFloatTensor(v1::FLOAT32, {64, 32}, w);
  ASSERT_TRUE(weights.ok());
  g.Output(g.Relu(g.MatMul(g.Input("x", v1::FLOAT32, {-1, 64}), g.Constant("w", *weights))), "y");
  std::string json;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(g.Build(), &json).ok());
  std::filesystem::create_directories(repo / "mlp" / "1");
  std::ofstream(repo / "mlp" / "1" / "graph.json") << json;
  std::ofstream(repo / "mlp" / "config.pbtxt")
      << "max_batch_size: 8\ndynamic_batching { preferred_batch_size: [ 4 ] max_queue_delay_microseconds: 20000 }\n";
  auto x = client::MakeFloatTensor(v1::FLOAT32, {1, 64}, std::vector<float>(64, 1.0f));
  ASSERT_TRUE(x.ok());
  ASSERT_TRUE(client::WriteNpy((repo / "x1.npy").string(), *x).ok());

  testing::ServerProcess server({"--model_repository=" + repo.string()});
  auto c = client::Client::Connect(server.target());
  ASSERT_TRUE(c.ok());
  LoadCommandArgs args = MlpArgs();
  args.graph_path.clear();
  args.model = "mlp";
  args.inputs = {"x=" + (repo / "x1.npy").string()};
  args.concurrency = {8};
  args.requests = 80;
  auto request = client::cli::PrepareLoadRequest(**c, args);
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->model(), "mlp");
  EXPECT_TRUE(request->graph_id().empty()) << "nothing is registered";
  auto steps = client::cli::RunLoad(**c, *request, args, std::cerr);
  ASSERT_TRUE(steps.ok()) << steps.status();
  const LoadStep& s = steps->at(0);
  EXPECT_EQ(s.ok, 80);
  int64_t counted = 0;
  for (const auto& [size, n] : s.batch_sizes) {
    EXPECT_GE(size, 1);
    EXPECT_LE(size, 8) << "past max_batch_size";
    counted += n;
  }
  EXPECT_EQ(counted, 80);
  EXPECT_GT(s.mean_batch, 1.0) << "8 callers of batch 1 shared no run";
  std::ostringstream out, notes;
  client::cli::LoadReportWriter("table", out, notes).Write(s);
  EXPECT_NE(out.str().find("exec batch"), std::string::npos) << out.str();
  EXPECT_NE(notes.str().find("executed batch sizes (size:requests)"), std::string::npos) << notes.str();
  // Without --model or a graph, or with both: a usage error.
  args.graph_path = NPU_SOURCE_DIR "/examples/graphs/mlp.json";
  EXPECT_FALSE(client::cli::PrepareLoadRequest(**c, args).ok());
  std::filesystem::remove_all(repo);
}

TEST(LoadCommand, RefusesUnboundedOrMalformedLoads) {
  testing::ServerProcess server;
  auto c = client::Client::Connect(server.target());
  ASSERT_TRUE(c.ok());
  LoadCommandArgs args = MlpArgs();
  auto request = client::cli::PrepareLoadRequest(**c, args);
  ASSERT_TRUE(request.ok());
  for (auto change : std::vector<std::function<void(LoadCommandArgs&)>>{
           [](LoadCommandArgs& a) { a.duration_s = 0; }, [](LoadCommandArgs& a) { a.requests = 0; },
           [](LoadCommandArgs& a) { a.warmup = -1; }, [](LoadCommandArgs& a) { a.stability_percentage = 100; },
           [](LoadCommandArgs& a) {
             a.stability_percentage = 10;
             a.max_windows = 2;
           }}) {
    LoadCommandArgs bad = args;
    change(bad);
    EXPECT_FALSE(client::cli::RunLoad(**c, *request, bad, std::cerr).ok());
  }
  std::ostringstream out;
  args.format = "xml";
  EXPECT_FALSE(client::cli::RunLoadCommand(**c, args, out, out).ok());
}

}  // namespace
}  // namespace npu
