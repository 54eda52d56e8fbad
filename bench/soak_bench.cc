// npu-bench soak: many concurrent clients send a mix of requests (runs,
// uploads, downloads, frees, graph registrations and deliberately bad
// requests) to a running npu-server for a bounded time, while the server's
// resident memory is sampled from /proc. scripts/soak.sh drives it.
//
//   npu-bench soak --target HOST:PORT --pid PID [--clients 64] [--seconds 300]
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

#include "absl/strings/str_cat.h"
#include "bench/bench_registry.h"
#include "bench/process_rss.h"
#include "client/client.h"

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
  int clients = 64;
  double seconds = 300;
};

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
      while (Clock::now() < end) {
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
  std::printf("{\"soak\": \"summary\", \"clients\": %d, \"seconds\": %.0f, \"calls\": %lld, \"unexpected\": %lld, "
              "\"rss_after_warmup_kib\": %lld, \"rss_end_kib\": %lld, \"rss_peak_kib\": %lld, \"growth\": %.4f}\n",
              clients, seconds, static_cast<long long>(calls.load()), static_cast<long long>(bad),
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
  command.add_option("--clients", args->clients, "concurrent clients")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  command.add_option("--seconds", args->seconds, "duration")->check(CLI::Range(1.0, 3600.0))->capture_default_str();
  return [args] { return RunSoak(*args); };
}

}  // namespace

NPU_BENCH("soak", "mixed load against a running server, with its RSS over time", SetupSoak);

}  // namespace npu::bench
