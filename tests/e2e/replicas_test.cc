// Scale-out over several npu-server replicas from one client (DESIGN.md 7):
// gRPC's round_robin spreads stateless Runs, the retry policy for UNAVAILABLE
// hides a replica that dies, and device handles stay on their replica.
#include <signal.h>

#include <atomic>
#include <cstdint>
#include <iostream>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "client/channel.h"
#include "client/client.h"
#include "client/graph_json.h"
#include "client/npy.h"
#include "tests/e2e/server_process.h"

namespace npu {
namespace {

using client::Client;
using client::ClientOptions;
using ::testing::HasSubstr;
using testing::ServerProcess;

constexpr int kReplicas = 3;

// The MLP example as one self-contained (inline graph) Run: any replica can
// serve it, which is what makes it safe to balance.
v1::RunRequest MlpRunRequest() {
  absl::StatusOr<v1::Graph> graph = client::LoadGraphJson(NPU_SOURCE_DIR "/examples/graphs/mlp.json");
  EXPECT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<v1::Tensor> x = client::ReadNpy(NPU_SOURCE_DIR "/examples/graphs/mlp_x.npy");
  EXPECT_TRUE(x.ok()) << x.status();
  v1::RunRequest request;
  *request.mutable_graph() = *std::move(graph);
  v1::RunInput* input = request.add_inputs();
  input->set_name("x");
  *input->mutable_tensor() = *std::move(x);
  return request;
}

// "ipv4:127.0.0.1:P1,127.0.0.1:P2,..." — gRPC's static list of addresses.
std::string MultiTarget(const std::vector<std::unique_ptr<ServerProcess>>& servers) {
  std::vector<std::string> addresses;
  for (const auto& s : servers) addresses.push_back(s->target());
  return absl::StrCat("ipv4:", absl::StrJoin(addresses, ","));
}

std::unique_ptr<Client> ConnectOrDie(const std::string& target, ClientOptions options = {}) {
  options.timeout = absl::Seconds(20);
  absl::StatusOr<std::unique_ptr<Client>> c = Client::Connect(target, options);
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? *std::move(c) : nullptr;
}

// runs_total of one replica, asked over a channel pinned to it.
uint64_t RunsOn(const ServerProcess& server) {
  std::unique_ptr<Client> pinned = ConnectOrDie(server.target());
  absl::StatusOr<v1::ServerStats> stats = pinned->GetStats();
  EXPECT_TRUE(stats.ok()) << server.target() << ": " << stats.status();
  return stats.ok() ? stats->runs_total() : 0;
}

class ReplicasTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < kReplicas; ++i) {
      servers_.push_back(std::make_unique<ServerProcess>(
          std::vector<std::string>{"--threads=1", "--log_requests=false"}));
    }
  }

  std::vector<std::unique_ptr<ServerProcess>> servers_;
};

TEST(ServiceConfigTest, RoundRobinAndRetryOnUnavailableByDefault) {
  const std::string json = client::MakeServiceConfigJson(ClientOptions{});
  EXPECT_THAT(json, HasSubstr(R"("round_robin")"));
  EXPECT_THAT(json, HasSubstr(R"("retryableStatusCodes":["UNAVAILABLE"])"));
  EXPECT_THAT(json, HasSubstr(R"("name":[{}])"));

  ClientOptions no_retry;
  no_retry.retry_unavailable = false;
  no_retry.load_balancing_policy = "pick_first";
  const std::string plain = client::MakeServiceConfigJson(no_retry);
  EXPECT_THAT(plain, HasSubstr(R"("pick_first")"));
  EXPECT_THAT(plain, ::testing::Not(HasSubstr("retryPolicy")));
}

TEST_F(ReplicasTest, RoundRobinSpreadsRunsOverEveryReplica) {
  std::unique_ptr<Client> client = ConnectOrDie(MultiTarget(servers_));
  ASSERT_NE(client, nullptr);
  const v1::RunRequest request = MlpRunRequest();
  constexpr int kRuns = 300;
  for (int i = 0; i < kRuns; ++i) {
    absl::StatusOr<v1::RunResponse> r = client->Run(request);
    ASSERT_TRUE(r.ok()) << "run " << i << ": " << r.status();
    ASSERT_EQ(r->outputs_size(), 1);
  }
  uint64_t total = 0;
  for (const auto& s : servers_) {
    const uint64_t runs = RunsOn(*s);
    std::cout << "[ replicas ] " << s->target() << " served " << runs << " of " << kRuns << " runs\n";
    EXPECT_GE(runs, kRuns / 5) << s->target() << " served " << runs << " of " << kRuns;
    total += runs;
  }
  EXPECT_EQ(total, static_cast<uint64_t>(kRuns));
}

TEST_F(ReplicasTest, PickFirstIsSelectableAndUsesOneReplica) {
  ClientOptions options;
  options.load_balancing_policy = "pick_first";
  std::unique_ptr<Client> client = ConnectOrDie(MultiTarget(servers_), options);
  ASSERT_NE(client, nullptr);
  const v1::RunRequest request = MlpRunRequest();
  for (int i = 0; i < 30; ++i) ASSERT_TRUE(client->Run(request).ok());
  std::vector<uint64_t> runs;
  for (const auto& s : servers_) runs.push_back(RunsOn(*s));
  EXPECT_THAT(runs, ::testing::UnorderedElementsAre(30, 0, 0));
}

TEST_F(ReplicasTest, LoadSurvivesKillingAReplica) {
  std::unique_ptr<Client> client = ConnectOrDie(MultiTarget(servers_));
  ASSERT_NE(client, nullptr);
  const v1::RunRequest request = MlpRunRequest();

  constexpr int kThreads = 4;
  constexpr int kCalls = 300;
  constexpr int kKillAfter = 100;  // completed calls before replica 2 is SIGKILLed
  std::atomic<int> next{0};
  std::atomic<int> completed{0};
  std::atomic<int> ok{0};
  std::atomic<int> ok_after_kill{0};
  std::atomic<bool> killed{false};
  std::vector<std::string> errors;
  std::mutex errors_mu;

  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      while (next.fetch_add(1) < kCalls) {
        const bool started_after_kill = killed.load();
        absl::StatusOr<v1::RunResponse> r = client->Run(request);
        if (r.ok()) {
          ok.fetch_add(1);
          if (started_after_kill) ok_after_kill.fetch_add(1);
        } else {
          std::lock_guard<std::mutex> lock(errors_mu);
          errors.push_back(r.status().ToString());
        }
        completed.fetch_add(1);
      }
    });
  }
  // The kill happens while the 4 threads keep calls in flight.
  while (completed.load() < kKillAfter) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  // Snapshot the survivors just before the kill: every call started after it
  // must show up in their counters.
  const uint64_t survivor0_at_kill = RunsOn(*servers_[0]);
  const uint64_t survivor1_at_kill = RunsOn(*servers_[1]);
  servers_[2]->Stop(SIGKILL);
  killed.store(true);
  const int completed_at_kill = completed.load();
  for (std::thread& t : threads) t.join();

  EXPECT_GE(ok.load(), kCalls * 99 / 100) << "failed calls:\n" << absl::StrJoin(errors, "\n");
  // The client moved on: every call started after the kill landed on a
  // survivor, and both survivors kept taking calls.
  const uint64_t survivor0_gain = RunsOn(*servers_[0]) - survivor0_at_kill;
  const uint64_t survivor1_gain = RunsOn(*servers_[1]) - survivor1_at_kill;
  std::cout << "[ replicas ] " << ok.load() << "/" << kCalls << " calls ok; replica 2 SIGKILLed after "
            << completed_at_kill << " completed; " << ok_after_kill.load()
            << " calls started after the kill succeeded; survivors served " << survivor0_gain << " + "
            << survivor1_gain << " since just before it; " << errors.size() << " errors\n";
  EXPECT_GT(ok_after_kill.load(), 0);
  EXPECT_GE(survivor0_gain + survivor1_gain, static_cast<uint64_t>(ok_after_kill.load()));
  EXPECT_GT(survivor0_gain, 0u);
  EXPECT_GT(survivor1_gain, 0u);
}

// Device memory is per replica: work with handles pins to one address, and a
// handle used on another replica fails NOT_FOUND naming it, never silently.
TEST_F(ReplicasTest, HandleUsedOnAnotherReplicaIsNotFound) {
  std::unique_ptr<Client> owner = ConnectOrDie(servers_[0]->target());
  std::unique_ptr<Client> other = ConnectOrDie(servers_[1]->target());
  ASSERT_NE(owner, nullptr);
  ASSERT_NE(other, nullptr);
  v1::RunRequest request = MlpRunRequest();
  absl::StatusOr<v1::TensorHandle> handle = owner->Upload(request.inputs(0).tensor());
  ASSERT_TRUE(handle.ok()) << handle.status();
  const std::string id = handle->handle();
  request.mutable_inputs(0)->set_handle(id);

  absl::StatusOr<v1::RunResponse> on_owner = owner->Run(request);
  EXPECT_TRUE(on_owner.ok()) << on_owner.status();

  absl::StatusOr<v1::RunResponse> elsewhere = other->Run(request);
  ASSERT_FALSE(elsewhere.ok());
  EXPECT_EQ(elsewhere.status().code(), absl::StatusCode::kNotFound) << elsewhere.status();
  EXPECT_THAT(elsewhere.status().message(), HasSubstr(id));

  absl::StatusOr<v1::Tensor> download = other->Download(id);
  ASSERT_FALSE(download.ok());
  EXPECT_EQ(download.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(download.status().message(), HasSubstr(id));
}

}  // namespace
}  // namespace npu
