// Deadlines, cancellation and the SIGTERM drain, against a real npu-server.
// Nothing here asserts a timing: only what the server does.
#include <signal.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "tests/e2e/e2e_support.h"
#include "tests/e2e/server_process.h"

namespace npu::testing {
namespace {

using namespace std::chrono_literals;

// s = x + y broadcast to FLOAT16[n,n], then a chain of `matmuls` n x n x n
// GEMMs on the Cube: long enough to be in flight for a while, from a request
// of a few KiB.
v1::RunRequest LongGemmRun(int64_t n, int matmuls) {
  v1::RunRequest req;
  v1::Graph* g = req.mutable_graph();
  g->set_name("long_gemm");
  const std::pair<const char*, std::vector<int64_t>> inputs[] = {{"x", {n, 1}}, {"y", {1, n}}};
  for (const auto& [name, shape] : inputs) {
    v1::ValueInfo* in = g->add_inputs();
    in->set_name(name);
    in->set_dtype(v1::FLOAT16);
    for (int64_t d : shape) in->add_shape(d);
    v1::RunInput* ri = req.add_inputs();
    ri->set_name(name);
    ri->mutable_tensor()->set_dtype(v1::FLOAT16);
    for (int64_t d : shape) ri->mutable_tensor()->add_shape(d);
    ri->mutable_tensor()->set_data(std::string(n * 2, '\0'));  // zeros: no overflow, same work
  }
  v1::Node* add = g->add_nodes();
  add->set_name("square");
  add->set_op_type("Add");
  add->add_inputs("x");
  add->add_inputs("y");
  add->add_outputs("s");
  std::string prev = "s";
  for (int i = 0; i < matmuls; ++i) {
    v1::Node* mm = g->add_nodes();
    mm->set_name("mm" + std::to_string(i));
    mm->set_op_type("MatMul");
    mm->add_inputs(prev);
    mm->add_inputs("s");
    prev = "m" + std::to_string(i);
    mm->add_outputs(prev);
  }
  // A 1-element slice would need ops the server may not have; keep the whole
  // result on the device so the response stays small.
  g->add_outputs(prev);
  req.mutable_options()->set_keep_all_on_device(true);
  return req;
}

// The stubs these tests use, on one channel to `server`.
struct Stubs {
  explicit Stubs(const ServerProcess& server)
      : channel(TestChannel(server.target())),
        runtime(v1::RuntimeService::NewStub(channel)),
        devices(v1::DeviceService::NewStub(channel)),
        memory(v1::MemoryService::NewStub(channel)),
        health(grpc::health::v1::Health::NewStub(channel)) {}
  // Health's answer: SERVING, NOT_SERVING, or UNKNOWN when the call failed (no server).
  grpc::health::v1::HealthCheckResponse::ServingStatus Health() {
    grpc::health::v1::HealthCheckResponse h;
    grpc::Status s = health->Check(Ctx(std::chrono::seconds(2)).get(), {}, &h);
    return s.ok() ? h.status() : grpc::health::v1::HealthCheckResponse::UNKNOWN;
  }
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<v1::RuntimeService::Stub> runtime;
  std::unique_ptr<v1::DeviceService::Stub> devices;
  std::unique_ptr<v1::MemoryService::Stub> memory;
  std::unique_ptr<grpc::health::v1::Health::Stub> health;
};

v1::ServerStats Stats(v1::DeviceService::Stub& devices) {
  v1::ServerStats stats;
  EXPECT_TRUE(devices.GetStats(Ctx().get(), {}, &stats).ok());
  return stats;
}

// Polls `done` every 10 ms for at most `limit` (a bound against hangs, not a timing assertion).
template <typename F>
bool WaitFor(F done, std::chrono::milliseconds limit = 60s) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return done();
}

TEST(Deadlines, LargeGemmPastItsDeadlineIsStoppedAndFreesTheDevice) {
  ServerProcess server({"--log_level=warn"});
  Stubs stubs(server);
  auto& runtime = stubs.runtime;
  auto& devices = stubs.devices;

  v1::RunResponse resp;
  grpc::Status st = runtime->Run(Ctx(50ms).get(), LongGemmRun(2048, 16), &resp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << st.error_message();

  // The server notices the deadline and stops the device work (between tiles)...
  // (The cancelled count moves before the run leaves the in-flight count.)
  ASSERT_TRUE(WaitFor([&] {
    const v1::ServerStats s = Stats(*devices);
    return s.runs_cancelled() >= 1 && s.runs_in_flight() == 0;
  }));
  // ...so the device is free: nothing queued, nothing in flight, and the next run completes.
  const v1::ServerStats stats = Stats(*devices);
  ASSERT_EQ(stats.devices_size(), 1);
  EXPECT_EQ(stats.devices(0).queue_depth(), 0u);
  EXPECT_EQ(stats.runs_in_flight(), 0u);
  v1::RunResponse small;
  st = runtime->Run(Ctx().get(), AddRun(), &small);
  EXPECT_TRUE(st.ok()) << st.error_message();
  // No handle of the abandoned run was kept.
  auto& memory = stubs.memory;
  v1::ListHandlesResponse handles;
  ASSERT_TRUE(memory->List(Ctx().get(), {}, &handles).ok());
  EXPECT_EQ(handles.handles_size(), 0);
}

TEST(Deadlines, CancelledCallIsStoppedAndQueuedOnesAreSkipped) {
  ServerProcess server({"--log_level=warn"});
  Stubs stubs(server);
  auto& runtime = stubs.runtime;
  auto& devices = stubs.devices;

  // One long run occupies the device; three more queue behind it. All four
  // callers give up; the queued ones must never run.
  grpc::ClientContext contexts[4];
  std::vector<std::thread> callers;
  std::atomic<int> cancelled{0};
  for (auto& ctx : contexts) {
    callers.emplace_back([&] {
      v1::RunResponse resp;
      grpc::Status st = runtime->Run(&ctx, LongGemmRun(2048, 16), &resp);
      if (st.error_code() == grpc::StatusCode::CANCELLED) cancelled.fetch_add(1);
    });
  }
  ASSERT_TRUE(WaitFor([&] { return Stats(*devices).runs_in_flight() == 4; }));
  for (auto& ctx : contexts) ctx.TryCancel();
  for (auto& t : callers) t.join();
  EXPECT_EQ(cancelled.load(), 4);
  ASSERT_TRUE(WaitFor([&] { return Stats(*devices).runs_cancelled() == 4; }));
  const v1::ServerStats stats = Stats(*devices);
  EXPECT_EQ(stats.devices(0).queue_depth(), 0u);
  EXPECT_LE(stats.devices(0).runs(), 1u);  // only the first one ever started
  v1::RunResponse small;
  grpc::Status st = runtime->Run(Ctx().get(), AddRun(), &small);
  EXPECT_TRUE(st.ok()) << st.error_message();
}

// A run holding the device past --device_watchdog_s makes health NOT_SERVING
// and npu stats say which device is wedged; both recover when it lets go.
TEST(Watchdog, ADeviceHeldPastTheBoundIsReportedUntilReleased) {
  ServerProcess server({"--log_level=warn", "--device_watchdog_s=0.2"});
  Stubs stubs(server);
  auto& runtime = stubs.runtime;
  auto& devices = stubs.devices;
  auto serving = [&] { return stubs.Health() == grpc::health::v1::HealthCheckResponse::SERVING; };
  ASSERT_TRUE(serving());

  grpc::ClientContext long_ctx;
  std::thread caller([&] {
    v1::RunResponse resp;
    runtime->Run(&long_ctx, LongGemmRun(2048, 64), &resp);
  });
  ASSERT_TRUE(WaitFor([&] { return !serving(); }));
  const v1::ServerStats stats = Stats(*devices);
  ASSERT_EQ(stats.devices_size(), 1);
  EXPECT_TRUE(stats.devices(0).wedged());
  EXPECT_GT(stats.devices(0).held_s(), 0.2);
  // What an operator sees: `npu stats` marks the device.
  std::string printed;
  if (FILE* p = popen((std::string(NPU_CLI_BIN) + " --target " + server.target() + " stats 2>&1").c_str(), "r")) {
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) printed.append(buf, n);
    EXPECT_EQ(pclose(p), 0) << printed;
  }
  EXPECT_NE(printed.find("WEDGED"), std::string::npos) << printed;

  long_ctx.TryCancel();  // the run stops, the device is released
  caller.join();
  ASSERT_TRUE(WaitFor([&] { return serving(); }));
  EXPECT_FALSE(Stats(*devices).devices(0).wedged());
}

TEST(Drain, SigtermFinishesRunsInFlightRefusesNewOnesAndExitsZero) {
  // A drain timeout far above the run's length, even under sanitizers (10x slower).
  ServerProcess server({"--log_level=warn", "--drain_timeout_s=600"});
  Stubs stubs(server);
  auto& runtime = stubs.runtime;
  auto& devices = stubs.devices;

  grpc::Status long_status;
  v1::RunResponse long_resp;
  std::thread in_flight([&] { long_status = runtime->Run(Ctx(600s).get(), LongGemmRun(2048, 6), &long_resp); });
  ASSERT_TRUE(WaitFor([&] { return Stats(*devices).runs_in_flight() == 1; }));

  ASSERT_EQ(kill(server.pid(), SIGTERM), 0);
  // Health turns NOT_SERVING (or the server is already gone).
  EXPECT_TRUE(WaitFor([&] { return stubs.Health() != grpc::health::v1::HealthCheckResponse::SERVING; }));
  // A new run is refused: UNAVAILABLE from the draining server, or no server at all.
  v1::RunResponse refused;
  grpc::Status st = runtime->Run(Ctx(5s).get(), AddRun(), &refused);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAVAILABLE) << st.error_message();

  in_flight.join();
  EXPECT_TRUE(long_status.ok()) << long_status.error_message();
  EXPECT_EQ(long_resp.outputs_size(), 1);

  const int status = server.Stop();
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace npu::testing
