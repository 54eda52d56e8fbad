// npu-bench service: npuserve's per-call overhead against a bare gRPC echo
// service, in one process and one run (same gRPC, same machine, same noise).
//
//   run_p50_us       one caller, Run of a registered 64-element Add vs echo of
//                    a message as large as that RunRequest (target <= 1.1x);
//                    also vs the same echo on gRPC's callback API, which Run uses
//   run_qps_16       16 concurrent callers, requests/s (target >= 0.8x)
//   transfer_MiB_s   Upload then Download of a 4 / 64 MiB tensor vs one echo of
//                    the same bytes (each moves the bytes both ways; target >= 1.0x)
//
// Like for like: both servers keep the same number of gRPC handler threads
// (npu-server's --grpc_max_pollers), and echo calls go over a channel made by
// the client library's MakeChannel and carry the deadline its calls carry. --case picks one of latency, throughput, transfer.
// Prints one JSON object per line.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/bench_registry.h"
#include "bench/echo.grpc.pb.h"
#include "bench/latency.h"
#include "bench/tiny_add.h"
#include "client/channel.h"
#include "client/client.h"
#include "server/rpc/npu_server.h"
#include "server/core/request_log.h"

namespace npu::bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kMaxMessage = 256 << 20;

class EchoService final : public Echo::Service {
  grpc::Status Echo(grpc::ServerContext*, const EchoMessage* req, EchoMessage* resp) override {
    resp->set_data(req->data());
    return grpc::Status::OK;
  }
};

// The same echo on gRPC's callback API, the API npuserve's Run uses: the
// difference between the two echoes is what gRPC itself charges for it.
class CallbackEchoService final : public Echo::CallbackService {
  grpc::ServerUnaryReactor* Echo(grpc::CallbackServerContext* ctx, const EchoMessage* req,
                                 EchoMessage* resp) override {
    resp->set_data(req->data());
    grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }
};

struct EchoServer {
  EchoServer(int max_pollers, bool callback) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.SetMaxReceiveMessageSize(kMaxMessage);
    builder.SetMaxSendMessageSize(kMaxMessage);
    if (callback) {
      builder.RegisterService(&callback_service);
    } else {
      builder.RegisterService(&service);
    }
    builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS, max_pollers);
    server = builder.BuildAndStart();
  }
  ~EchoServer() { server->Shutdown(std::chrono::system_clock::now()); }
  EchoService service;
  CallbackEchoService callback_service;
  std::unique_ptr<grpc::Server> server;
  int port = 0;
};


// Calls per second from `threads` callers over `seconds`.
template <typename Call>
double Qps(int threads, double seconds, Call call) {
  std::atomic<int64_t> calls{0};
  std::atomic<bool> failed{false};
  const auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  const auto t0 = Clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      while (Clock::now() < end) {
        if (!call()) failed = true;
        calls.fetch_add(1);
      }
    });
  }
  for (auto& t : pool) t.join();
  return failed ? -1 : calls.load() / std::chrono::duration<double>(Clock::now() - t0).count();
}

// The target is ratio >= bound when higher is better, ratio <= bound otherwise.
void Report(const char* name, double npu, double echo, double bound, bool higher_is_better) {
  const double ratio = echo > 0 ? npu / echo : 0;
  const bool met = higher_is_better ? ratio >= bound : ratio <= bound;
  std::printf("{\"bench\": \"service\", \"case\": \"%s\", \"npuserve\": %.1f, \"echo\": %.1f, \"ratio\": %.3f, "
              "\"target\": \"%s%.2f\", \"met\": %s}\n",
              name, npu, echo, ratio, higher_is_better ? ">=" : "<=", bound, met ? "true" : "false");
  std::fflush(stdout);
}

struct ServiceArgs {
  int reps = 3;
  double seconds = 2;
  std::string only;  // one case, or all
};

int RunServiceBench(const ServiceArgs& args) {
  const int reps = args.reps;
  const double seconds = args.seconds;
  const std::string& only = args.only;
  core::RequestLog::SetLevel("off").IgnoreError();  // the echo service logs nothing either
  rpc::ServerConfig config;
  config.listen = "127.0.0.1:0";
  config.device_options.omp_threads = 0;
  auto npu_server = rpc::NpuServer::Start(config);
  if (!npu_server.ok()) {
    std::fprintf(stderr, "service: %s\n", std::string(npu_server.status().message()).c_str());
    return 1;
  }
  // Like for like: the echo server keeps as many handler threads as npu-server,
  // and its calls carry the same deadline as the npuserve client's.
  EchoServer echo_server(config.grpc_max_pollers, /*callback=*/false);
  EchoServer callback_echo_server(config.grpc_max_pollers, /*callback=*/true);
  client::ClientOptions options;
  options.max_send_message_bytes = kMaxMessage;
  // The echo channel is made as the client library makes its own: same message
  // limits, load balancing and retry policy.
  auto echo_channel = client::MakeChannel("127.0.0.1:" + std::to_string(echo_server.port), options);
  if (!echo_channel.ok()) return 1;
  auto echo = Echo::NewStub(*echo_channel);
  auto callback_echo_channel =
      client::MakeChannel("127.0.0.1:" + std::to_string(callback_echo_server.port), options);
  if (!callback_echo_channel.ok()) return 1;
  auto callback_echo = Echo::NewStub(*callback_echo_channel);
  auto npu = client::Client::Connect("127.0.0.1:" + std::to_string((*npu_server)->port()), options);
  if (!npu.ok()) return 1;

  auto registered = (*npu)->RegisterGraph(TinyAddGraph());
  if (!registered.ok()) {
    std::fprintf(stderr, "service: %s\n", std::string(registered.status().message()).c_str());
    return 1;
  }
  const v1::RunRequest run = TinyAddRun(registered->graph_id());
  EchoMessage small;
  small.set_data(std::string(run.ByteSizeLong(), 'x'));

  auto run_call = [&] { return (*npu)->Run(run).ok(); };
  auto echo_on = [&](Echo::Stub& stub) {
    return [&] {
      grpc::ClientContext ctx;
      ctx.set_deadline(absl::ToChronoTime(absl::Now() + options.timeout));
      EchoMessage resp;
      return stub.Echo(&ctx, small, &resp).ok();
    };
  };
  auto echo_call = echo_on(*echo);
  auto callback_echo_call = echo_on(*callback_echo);
  // Warm them all (connections, thread pools, the device's first run).
  P50Us(300, run_call);
  P50Us(300, echo_call);
  P50Us(300, callback_echo_call);

  // Alternate the contenders, so drift on a shared machine hits both alike.
  std::vector<double> run_p50, echo_p50, callback_echo_p50, run_qps, echo_qps, callback_echo_qps;
  const auto wanted = [&](const char* name) { return only.empty() || only == name; };
  for (int r = 0; r < reps && wanted("latency"); ++r) {
    run_p50.push_back(P50Us(2000, run_call));
    echo_p50.push_back(P50Us(2000, echo_call));
    callback_echo_p50.push_back(P50Us(2000, callback_echo_call));
  }
  if (wanted("latency")) {
    Report("run_p50_us", Median(run_p50), Median(echo_p50), 1.1, false);
    Report("run_p50_us_vs_callback_echo", Median(run_p50), Median(callback_echo_p50), 1.1, false);
  }
  for (int r = 0; r < reps && wanted("throughput"); ++r) {
    run_qps.push_back(Qps(16, seconds, run_call));
    echo_qps.push_back(Qps(16, seconds, echo_call));
    callback_echo_qps.push_back(Qps(16, seconds, callback_echo_call));
  }
  if (wanted("throughput")) {
    Report("run_qps_16", Median(run_qps), Median(echo_qps), 0.8, true);
    Report("run_qps_16_vs_callback_echo", Median(run_qps), Median(callback_echo_qps), 0.8, true);
  }

  for (int64_t mib : {4, 64}) {
    if (!wanted("transfer")) break;
    const v1::Tensor tensor = Floats(mib * (1 << 20) / 4);
    EchoMessage big;
    big.set_data(tensor.data());
    std::vector<double> npu_mibs, echo_mibs;
    const int transfer_reps = mib >= 64 ? std::max(3, reps) : std::max(5, 2 * reps);
    for (int r = 0; r < transfer_reps + 1; ++r) {
      auto t0 = Clock::now();
      auto handle = (*npu)->Upload(tensor);
      if (!handle.ok()) return 1;
      auto back = (*npu)->Download(handle->handle());
      if (!back.ok() || back->data().size() != tensor.data().size()) return 1;
      const double npu_s = std::chrono::duration<double>(Clock::now() - t0).count();
      (*npu)->Free(handle->handle()).IgnoreError();
      back = absl::InternalError("freed");

      t0 = Clock::now();
      {
        grpc::ClientContext ctx;
        ctx.set_deadline(absl::ToChronoTime(absl::Now() + options.timeout));
        EchoMessage resp;
        if (!echo->Echo(&ctx, big, &resp).ok()) return 1;
      }
      const double echo_s = std::chrono::duration<double>(Clock::now() - t0).count();
      if (r == 0) continue;  // warm-up round
      npu_mibs.push_back(2.0 * mib / npu_s);
      echo_mibs.push_back(2.0 * mib / echo_s);
    }
    Report(mib == 4 ? "transfer_4MiB_MiB_s" : "transfer_64MiB_MiB_s", Median(npu_mibs), Median(echo_mibs), 1.0,
           true);
  }
  return 0;
}

std::function<int()> SetupServiceBench(CLI::App& command) {
  auto args = std::make_shared<ServiceArgs>();
  command.add_option("--reps", args->reps, "rounds per case (the median is printed)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  command.add_option("--seconds", args->seconds, "seconds per throughput round")
      ->check(CLI::Range(0.2, 3600.0))
      ->capture_default_str();
  command.add_option("--case", args->only, "only this case (default: all)")
      ->check(CLI::IsMember({"latency", "throughput", "transfer"}));
  return [args] { return RunServiceBench(*args); };
}

}  // namespace

NPU_BENCH("service", "per-call overhead against a bare gRPC echo service, like for like", SetupServiceBench);

}  // namespace npu::bench
