// npu-bench kserve: what the KServe v2 frontends cost per call against npu.v1
// Run of the same registered graph (out = x + y over 64 floats), one caller,
// one in-process server, in one run (same gRPC, same machine, same noise).
//
//   grpc_raw_p50_us     ModelInfer, inputs in raw_input_contents
//   grpc_typed_p50_us   ModelInfer, inputs in contents.fp32_contents
//   http_json_p50_us    POST /v2/models/M/infer, JSON data in and out
//   http_binary_p50_us  the same with the binary tensor data extension both ways
//
// Each line: the frontend's p50, npu.v1 Run's p50 measured in the same rounds,
// and their ratio. The contenders alternate, so drift on a shared machine hits
// them alike. Prints one JSON object per line.
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <httplib.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/bench_registry.h"
#include "bench/latency.h"
#include "bench/tiny_add.h"
#include "client/channel.h"
#include "client/client.h"
#include "kserve/grpc_service.grpc.pb.h"
#include "server/rpc/npu_server.h"
#include "server/core/request_log.h"

namespace npu::bench {
namespace {

constexpr int kElements = kTinyAddElements;  // floats per input

struct KserveArgs {
  int reps = 5;
  int calls = 2000;
};

// The infer request's JSON: the data inline, or (binary) the sizes of the
// bytes that follow it, with the outputs asked for as binary data too.
std::string JsonBody(bool binary) {
  std::vector<int> values(kElements);
  for (int i = 0; i < kElements; ++i) values[i] = i % 97;
  const std::string data = binary ? absl::StrCat("\"parameters\": {\"binary_data_size\": ", kElements * 4, "}")
                                  : absl::StrCat("\"data\": [", absl::StrJoin(values, ","), "]");
  std::vector<std::string> inputs;
  for (const char* name : {"x", "y"}) {
    inputs.push_back(absl::StrCat("{\"name\": \"", name, "\", \"datatype\": \"FP32\", \"shape\": [", kElements,
                                  "], ", data, "}"));
  }
  return absl::StrCat("{\"inputs\": [", absl::StrJoin(inputs, ", "), "]",
                      binary ? ", \"parameters\": {\"binary_data_output\": true}" : "", "}");
}

int RunKserveBench(const KserveArgs& args) {
  core::RequestLog::SetLevel("off").IgnoreError();
  rpc::ServerConfig config;
  config.listen = "127.0.0.1:0";
  config.http_listen = "127.0.0.1:0";
  config.device_options.omp_threads = 0;
  auto server = rpc::NpuServer::Start(config);
  if (!server.ok()) {
    std::fprintf(stderr, "kserve: %s\n", std::string(server.status().message()).c_str());
    return 1;
  }
  const std::string target = "127.0.0.1:" + std::to_string((*server)->port());
  client::ClientOptions options;
  auto npu = client::Client::Connect(target, options);
  auto channel = client::MakeChannel(target, options);
  if (!npu.ok() || !channel.ok()) return 1;
  auto kserve = inference::GRPCInferenceService::NewStub(*channel);
  auto registered = (*npu)->RegisterGraph(TinyAddGraph());
  if (!registered.ok()) {
    std::fprintf(stderr, "kserve: %s\n", std::string(registered.status().message()).c_str());
    return 1;
  }
  const std::string& id = registered->graph_id();
  const v1::RunRequest run = TinyAddRun(id);
  const std::string& bytes = run.inputs(0).tensor().data();
  inference::ModelInferRequest raw, typed;
  for (inference::ModelInferRequest* req : {&raw, &typed}) {
    req->set_model_name(id);
    for (const char* name : {"x", "y"}) {
      auto* in = req->add_inputs();
      in->set_name(name);
      in->set_datatype("FP32");
      in->add_shape(kElements);
      if (req == &raw) {
        req->add_raw_input_contents(bytes);
      } else {
        in->mutable_contents()->mutable_fp32_contents()->Resize(kElements, 0.0f);
        std::memcpy(in->mutable_contents()->mutable_fp32_contents()->mutable_data(), bytes.data(), bytes.size());
      }
    }
  }
  const std::string json_body = JsonBody(false);
  const std::string binary_header = JsonBody(true);
  const std::string binary_body = binary_header + bytes + bytes;

  httplib::Client http("127.0.0.1", (*server)->http_port());
  http.set_keep_alive(true);
  http.set_tcp_nodelay(true);  // as curl does: headers and body in two writes would wait for a delayed ACK
  const std::string path = "/v2/models/" + id + "/infer";
  const auto post = [&](const std::string& body, const httplib::Headers& headers, const char* type) {
    auto r = http.Post(path, headers, body, type);
    return r && r->status == 200;
  };
  const httplib::Headers binary_headers{{"Inference-Header-Content-Length", std::to_string(binary_header.size())}};

  const std::function<bool()> run_call = [&] { return (*npu)->Run(run).ok(); };
  const auto infer = [&](const inference::ModelInferRequest& req) {
    return [&] {
      grpc::ClientContext ctx;
      ctx.set_deadline(absl::ToChronoTime(absl::Now() + options.timeout));
      inference::ModelInferResponse resp;
      return kserve->ModelInfer(&ctx, req, &resp).ok() && resp.outputs_size() == 1;
    };
  };
  struct Contender {
    const char* name;
    std::function<bool()> call;
    std::vector<double> p50, run_p50;
  };
  std::vector<Contender> contenders = {
      {"grpc_raw_p50_us", infer(raw), {}, {}},
      {"grpc_typed_p50_us", infer(typed), {}, {}},
      {"http_json_p50_us", [&] { return post(json_body, {}, "application/json"); }, {}, {}},
      {"http_binary_p50_us", [&] { return post(binary_body, binary_headers, "application/octet-stream"); }, {}, {}},
  };
  // Warm every path (connections, thread pools, the device's first run).
  if (P50Us(300, run_call) < 0) return 1;
  for (Contender& c : contenders) {
    if (P50Us(300, c.call) < 0) {
      std::fprintf(stderr, "kserve: %s failed\n", c.name);
      return 1;
    }
  }
  for (int r = 0; r < args.reps; ++r) {
    for (Contender& c : contenders) {
      c.run_p50.push_back(P50Us(args.calls, run_call));
      c.p50.push_back(P50Us(args.calls, c.call));
    }
  }
  for (const Contender& c : contenders) {
    const double ours = Median(c.p50), anchor = Median(c.run_p50);
    std::printf("{\"bench\": \"kserve\", \"case\": \"%s\", \"kserve\": %.1f, \"npu_v1_run\": %.1f, \"ratio\": %.3f}\n",
                c.name, ours, anchor, anchor > 0 ? ours / anchor : 0);
    std::fflush(stdout);
  }
  return 0;
}

std::function<int()> SetupKserveBench(CLI::App& command) {
  auto args = std::make_shared<KserveArgs>();
  command.add_option("--reps", args->reps, "rounds (the median is printed)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  command.add_option("--calls", args->calls, "sequential calls per contender per round (their p50)")
      ->check(CLI::Range(10, 1000000))
      ->capture_default_str();
  return [args] { return RunKserveBench(*args); };
}

}  // namespace

NPU_BENCH("kserve", "KServe v2 ModelInfer (gRPC raw/typed, HTTP JSON/binary) against npu.v1 Run, same graph",
          SetupKserveBench);

}  // namespace npu::bench
