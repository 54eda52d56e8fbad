// npu-bench soak: many concurrent clients send a mix of requests to a
// running npu-server for a bounded time, while the server's resident memory is
// sampled from /proc. scripts/soak.sh drives it. The surfaces (--surfaces,
// all by default):
//   npu      npu.v1 runs, uploads, downloads, frees, registrations, bad requests
//   kserve   KServe gRPC ModelInfer, good and malformed
//   rest     KServe REST on --http-port: JSON and binary inferences, probes,
//            bad JSON, and raw requests with conflicting Content-Lengths
//   train    TrainingService steps and evaluations on a few shared trainers
//
//   npu-bench soak --target HOST:PORT --pid PID [--http-port N] [--clients 64] [--seconds 300]
//                  [--surfaces npu,kserve,rest,train]
//
// Prints one JSON line per RSS sample and a summary line; exits 1 on any
// unexpected status or when RSS grew 10% or more after the warm-up (first 20%):
// median of the last quarter of the samples against the median just after warm-up.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <httplib.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "bench/bench_registry.h"
#include "bench/process_rss.h"
#include "bench/tiny_add.h"
#include "client/channel.h"
#include "client/client.h"
#include "client/trainer.h"
#include "kserve/grpc_service.grpc.pb.h"

namespace npu::bench {
namespace {

using Clock = std::chrono::steady_clock;

v1::Tensor Floats(std::vector<int64_t> shape, float value) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  v1::Tensor t;
  t.set_dtype(v1::FLOAT32);
  for (int64_t d : shape) t.add_shape(d);
  std::vector<float> v(n, value);
  t.set_data(reinterpret_cast<const char*>(v.data()), n * sizeof(float));
  return t;
}

v1::Graph Graph(const std::string& op, std::vector<int64_t> x_shape, std::vector<int64_t> y_shape) {
  v1::Graph g;
  for (auto [name, shape] : {std::pair{"x", x_shape}, std::pair{"y", y_shape}}) {
    v1::ValueInfo* in = g.add_inputs();
    in->set_name(name);
    in->set_dtype(v1::FLOAT32);
    for (int64_t d : shape) in->add_shape(d);
  }
  v1::Node* n = g.add_nodes();
  n->set_name("n");
  n->set_op_type(op);
  // std::string arguments: GCC 12 -O3 warns falsely (-Wrestrict) on add_inputs(const char*) here.
  for (const std::string input : {"x", "y"}) n->add_inputs(input);
  n->add_outputs(std::string("out"));
  g.add_outputs("out");
  return g;
}

v1::RunRequest RunOf(const std::string& graph_id, std::vector<int64_t> xs, std::vector<int64_t> ys) {
  v1::RunRequest r;
  r.set_graph_id(graph_id);
  for (auto [name, shape] : {std::pair{"x", xs}, std::pair{"y", ys}}) {
    v1::RunInput* in = r.add_inputs();
    in->set_name(name);
    *in->mutable_tensor() = Floats(shape, 0.5f);
  }
  return r;
}

struct SoakArgs {
  std::string target;
  int pid = 0;
  int http_port = 0;
  int clients = 64;
  double seconds = 300;
  std::string surfaces = "npu,kserve,rest,train";
};

// x [-1, 8] -> MatMul -> Relu -> MatMul -> logits [-1, 4]: a trainer's model.
v1::CreateTrainerRequest TrainerRequest() {
  v1::CreateTrainerRequest req;
  v1::Graph* g = req.mutable_graph();
  v1::ValueInfo* x = g->add_inputs();
  x->set_name("x");
  x->set_dtype(v1::FLOAT32);
  x->add_shape(-1);
  x->add_shape(8);
  for (auto [name, shape] : {std::pair{"w1", std::vector<int64_t>{8, 16}}, std::pair{"w2", std::vector<int64_t>{16, 4}}}) {
    v1::Initializer* w = g->add_initializers();
    w->set_name(name);
    *w->mutable_tensor() = Floats(shape, 0.05f);
  }
  auto node = [&](const char* name, const char* op, std::vector<std::string> in, const char* out) {
    v1::Node* n = g->add_nodes();
    n->set_name(name);
    n->set_op_type(op);
    for (auto& i : in) n->add_inputs(i);
    n->add_outputs(std::string(out));
  };
  node("m1", "MatMul", {"x", "w1"}, "h");
  node("r", "Relu", {"h"}, "a");
  node("m2", "MatMul", {"a", "w2"}, "logits");
  g->add_outputs("logits");
  req.set_loss(v1::CROSS_ENTROPY);
  req.mutable_optimizer()->set_kind(v1::OptimizerConfig::SGD);
  req.mutable_optimizer()->set_lr(0.01);
  return req;
}

// A raw request with two Content-Lengths that disagree: 400, then the server closes.
bool ConflictingLengthsRefused(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool refused = false;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0) {
    const std::string req =
        "POST /v2/models/add64/infer HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}";
    if (::send(fd, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size())) {
      std::string answer;
      char buf[4096];
      for (ssize_t n; (n = ::recv(fd, buf, sizeof(buf), 0)) > 0;) answer.append(buf, static_cast<size_t>(n));
      refused = answer.rfind("HTTP/1.1 400 ", 0) == 0;
    }
  }
  ::close(fd);
  return refused;
}

int RunSoak(const SoakArgs& args) {
  const std::string& target = args.target;
  const int pid = args.pid, clients = args.clients;
  const double seconds = args.seconds;
  client::ClientOptions options;
  options.timeout = absl::Seconds(30);
  auto client = client::Client::Connect(target, options);
  if (!client.ok()) return 1;
  v1::RegisterGraphRequest reg;
  *reg.mutable_graph() = Graph("Add", {64}, {64});
  auto tiny = (*client)->RegisterGraph(reg);
  *reg.mutable_graph() = Graph("MatMul", {128, 256}, {256, 128});
  auto gemm = (*client)->RegisterGraph(reg);
  if (!tiny.ok() || !gemm.ok()) {
    std::fprintf(stderr, "soak: cannot register the graphs\n");
    return 1;
  }
  const v1::RunRequest tiny_run = RunOf(tiny->graph_id(), {64}, {64});
  const v1::RunRequest gemm_run = RunOf(gemm->graph_id(), {128, 256}, {256, 128});
  v1::RunRequest bad_run = tiny_run;
  bad_run.mutable_inputs(0)->mutable_tensor()->mutable_data()->resize(10);  // short bytes: INVALID_ARGUMENT
  const v1::Tensor upload = Floats({64 * 1024}, 1.0f);                     // 256 KiB

  const std::vector<std::string> surfaces = absl::StrSplit(args.surfaces, ',');
  auto uses = [&](const char* surface) { return std::find(surfaces.begin(), surfaces.end(), surface) != surfaces.end(); };
  const bool use_npu = uses("npu"), use_kserve = uses("kserve"), use_rest = uses("rest") && args.http_port > 0,
             use_train = uses("train");
  if (uses("rest") && args.http_port == 0) std::fprintf(stderr, "soak: no --http-port, so no REST clients\n");
  // KServe: the tiny Add by id, raw contents; the malformed one has the wrong shape.
  auto add64 = (*client)->RegisterGraph(TinyAddGraph());
  auto channel = client::MakeChannel(target, options);
  if (!add64.ok() || !channel.ok()) return 1;
  auto kserve = inference::GRPCInferenceService::NewStub(*channel);
  inference::ModelInferRequest infer, bad_infer;
  infer.set_model_name(add64->graph_id());
  const std::string bytes = ::npu::bench::Floats(kTinyAddElements).data();
  for (const char* name : {"x", "y"}) {
    auto* in = infer.add_inputs();
    in->set_name(name);
    in->set_datatype("FP32");
    in->add_shape(kTinyAddElements);
    infer.add_raw_input_contents(bytes);
  }
  bad_infer = infer;
  bad_infer.mutable_inputs(1)->set_shape(0, kTinyAddElements + 1);
  const std::string rest_path = "/v2/models/" + add64->graph_id() + "/infer";
  std::string json_body = "{\"inputs\": [";
  for (const char* name : {"x", "y"}) {
    json_body += absl::StrCat(name[0] == 'y' ? ", " : "", "{\"name\": \"", name, "\", \"datatype\": \"FP32\", \"shape\": [",
                              kTinyAddElements, "], \"data\": [");
    for (int i = 0; i < kTinyAddElements; ++i) json_body += absl::StrCat(i ? "," : "", i % 97);
    json_body += "]}";
  }
  json_body += "]}";
  const std::string binary_json = absl::StrCat(
      "{\"inputs\": [{\"name\": \"x\", \"datatype\": \"FP32\", \"shape\": [", kTinyAddElements,
      "], \"parameters\": {\"binary_data_size\": ", bytes.size(), "}}, {\"name\": \"y\", \"datatype\": \"FP32\", "
      "\"shape\": [", kTinyAddElements, "], \"parameters\": {\"binary_data_size\": ", bytes.size(),
      "}}], \"parameters\": {\"binary_data_output\": true}}");
  const std::string binary_body = binary_json + bytes + bytes;
  // Training: a few trainers the clients share (a tenant may have 16).
  std::vector<std::unique_ptr<client::Trainer>> trainers;
  v1::Tensor train_x = Floats({4, 8}, 0.25f), train_labels;
  train_labels.set_dtype(v1::INT64);
  train_labels.add_shape(4);
  const std::vector<int64_t> labels = {0, 1, 2, 3};
  train_labels.set_data(reinterpret_cast<const char*>(labels.data()), labels.size() * sizeof(int64_t));
  for (int i = 0; use_train && i < 4; ++i) {
    auto t = client::Trainer::Create(**client, TrainerRequest());
    if (!t.ok()) {
      std::fprintf(stderr, "soak: cannot create a trainer: %s\n", std::string(t.status().message()).c_str());
      return 1;
    }
    trainers.push_back(*std::move(t));
  }

  std::atomic<int64_t> calls{0};
  std::mutex mu;
  std::map<std::string, int64_t> unexpected;  // "case: CODE" -> count
  auto expect = [&](const char* what, const absl::Status& s, absl::StatusCode want) {
    calls.fetch_add(1);
    if (s.code() == want) return;
    std::lock_guard<std::mutex> lock(mu);
    ++unexpected[absl::StrCat(what, ": ", absl::StatusCodeToString(s.code()), " ", s.message().substr(0, 80))];
  };
  const auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  std::vector<std::thread> pool;
  for (int c = 0; c < clients; ++c) {
    pool.emplace_back([&, c] {
      std::mt19937 rng(c);
      std::unique_ptr<httplib::Client> http;
      if (use_rest) {
        http = std::make_unique<httplib::Client>("127.0.0.1", args.http_port);
        http->set_keep_alive(true);
        http->set_tcp_nodelay(true);
        http->set_read_timeout(30);
      }
      auto rest = [&](const char* what, httplib::Result r, int want) {
        calls.fetch_add(1);
        if (r && r->status == want) return;
        std::lock_guard<std::mutex> lock(mu);
        ++unexpected[absl::StrCat(what, ": HTTP ", r ? std::to_string(r->status) : httplib::to_string(r.error()))];
      };
      // Each client mixes the surfaces it was given: npu.v1 takes the rest of the draws.
      while (Clock::now() < end) {
        const int surface = static_cast<int>(rng() % 100);
        if (use_kserve && surface < 20) {
          grpc::ClientContext ctx;
          ctx.set_deadline(absl::ToChronoTime(absl::Now() + options.timeout));
          inference::ModelInferResponse resp;
          const bool bad = rng() % 20 == 0;
          const grpc::Status s = kserve->ModelInfer(&ctx, bad ? bad_infer : infer, &resp);
          expect(bad ? "bad ModelInfer" : "ModelInfer", absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                                                                     s.error_message()),
                 bad ? absl::StatusCode::kInvalidArgument : absl::StatusCode::kOk);
          continue;
        }
        if (use_rest && surface >= 20 && surface < 40) {
          const int kind = static_cast<int>(rng() % 100);
          if (kind < 50) {
            rest("REST JSON infer", http->Post(rest_path, json_body, "application/json"), 200);
          } else if (kind < 80) {
            rest("REST binary infer",
                 http->Post(rest_path, {{"Inference-Header-Content-Length", std::to_string(binary_json.size())}},
                            binary_body, "application/octet-stream"),
                 200);
          } else if (kind < 90) {
            rest("REST ready", http->Get("/v2/health/ready"), 200);
          } else if (kind < 98) {
            rest("REST bad JSON", http->Post(rest_path, "{\"inputs\": [", "application/json"), 400);
          } else {
            calls.fetch_add(1);
            if (!ConflictingLengthsRefused(args.http_port)) {
              std::lock_guard<std::mutex> lock(mu);
              ++unexpected["REST conflicting Content-Length: not refused with 400"];
            }
          }
          continue;
        }
        if (use_train && surface >= 40 && surface < 50) {
          client::Trainer& t = *trainers[static_cast<size_t>(c) % trainers.size()];
          if (rng() % 4 == 0) {
            expect("Evaluate", t.Evaluate(train_x, train_labels).status(), absl::StatusCode::kOk);
          } else {
            expect("Step", t.Step(train_x, train_labels).status(), absl::StatusCode::kOk);
          }
          continue;
        }
        if (!use_npu) continue;
        const int dice = rng() % 100;
        if (dice < 50) {
          expect("tiny run", (*client)->Run(tiny_run).status(), absl::StatusCode::kOk);
        } else if (dice < 60) {
          expect("gemm run", (*client)->Run(gemm_run).status(), absl::StatusCode::kOk);
        } else if (dice < 75) {
          auto h = (*client)->Upload(upload);
          expect("upload", h.status(), absl::StatusCode::kOk);
          if (!h.ok()) continue;
          expect("download", (*client)->Download(h->handle()).status(), absl::StatusCode::kOk);
          expect("free", (*client)->Free(h->handle()), absl::StatusCode::kOk);
        } else if (dice < 85) {
          expect("bad run", (*client)->Run(bad_run).status(), absl::StatusCode::kInvalidArgument);
        } else if (dice < 90) {
          expect("bad download", (*client)->Download("00112233445566778899aabbccddeeff").status(),
                 absl::StatusCode::kNotFound);
        } else {
          auto r = (*client)->RegisterGraph(reg);
          expect("register", r.status(), absl::StatusCode::kOk);
          if (r.ok()) expect("unregister", (*client)->UnregisterGraph(r->graph_id()), absl::StatusCode::kOk);
        }
      }
    });
  }
  // RSS every 5 s; the first 20% of the run is warm-up.
  std::vector<std::pair<double, int64_t>> samples;
  const auto start = Clock::now();
  while (Clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min<int64_t>(5000, 1000 * seconds / 10)));
    const double t = std::chrono::duration<double>(Clock::now() - start).count();
    samples.push_back({t, RssKiB(pid)});
    std::printf("{\"soak\": \"rss\", \"t_s\": %.0f, \"rss_kib\": %lld, \"calls\": %lld}\n", t,
                static_cast<long long>(samples.back().second), static_cast<long long>(calls.load()));
    std::fflush(stdout);
  }
  for (auto& t : pool) t.join();

  // Growth is a trend, not a spike: 64 clients with 256 KiB uploads in flight
  // swing RSS by several MiB from one sample to the next. Compare the median of
  // the samples just after the warm-up (20%-45% of the run) with the median of
  // the last quarter.
  auto median_between = [&](double from, double to) {
    std::vector<int64_t> v;
    for (const auto& [t, rss] : samples) {
      if (t >= from * seconds && t <= to * seconds) v.push_back(rss);
    }
    std::sort(v.begin(), v.end());
    return v.empty() ? int64_t{-1} : v[v.size() / 2];
  };
  const int64_t after_warmup = median_between(0.2, 0.45), at_end = median_between(0.75, 1.0);
  int64_t peak = 0;
  for (const auto& [t, rss] : samples) peak = std::max(peak, rss);
  const double growth = after_warmup > 0 ? static_cast<double>(at_end - after_warmup) / after_warmup : 0;
  int64_t bad = 0;
  for (const auto& [what, n] : unexpected) {
    std::fprintf(stderr, "soak: unexpected %s (x%lld)\n", what.c_str(), static_cast<long long>(n));
    bad += n;
  }
  std::printf("{\"soak\": \"summary\", \"surfaces\": \"%s\", \"clients\": %d, \"seconds\": %.0f, \"calls\": %lld, \"unexpected\": %lld, "
              "\"rss_after_warmup_kib\": %lld, \"rss_end_kib\": %lld, \"rss_peak_kib\": %lld, \"growth\": %.4f}\n",
              args.surfaces.c_str(), clients, seconds, static_cast<long long>(calls.load()), static_cast<long long>(bad),
              static_cast<long long>(after_warmup), static_cast<long long>(at_end), static_cast<long long>(peak),
              growth);
  return bad == 0 && growth < 0.10 ? 0 : 1;
}

std::function<int()> SetupSoak(CLI::App& command) {
  auto args = std::make_shared<SoakArgs>();
  command.add_option("--target", args->target, "the server, HOST:PORT")->required();
  command.add_option("--pid", args->pid, "the server's process id (its RSS is sampled)")
      ->required()
      ->check(CLI::Range(1, std::numeric_limits<int>::max()));
  command.add_option("--http-port", args->http_port, "the server's KServe HTTP/REST port (--http_listen)")
      ->check(CLI::Range(0, 65535));
  command.add_option("--surfaces", args->surfaces, "what the clients call: npu, kserve, rest, train (comma-separated)")
      ->capture_default_str();
  command.add_option("--clients", args->clients, "concurrent clients")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  command.add_option("--seconds", args->seconds, "duration")->check(CLI::Range(1.0, 3600.0))->capture_default_str();
  return [args] { return RunSoak(*args); };
}

}  // namespace

NPU_BENCH("soak", "mixed load against a running server, with its RSS over time", SetupSoak);

}  // namespace npu::bench
