// npu-bench graph-memory: does a running npu-server give back the memory of a
// huge graph? Each round registers a chain of --nodes Add nodes, runs it once,
// and unregisters it; the server's resident memory (/proc/PID/status) is read
// before the first round, after every step, and --settle-ms after the
// unregister (the server gives memory back on its own schedule).
//
//   npu-bench graph-memory --target HOST:PORT --pid PID [--nodes 100000] [--rounds 5]
//
// Prints one JSON line per step and a summary; exits 1 on a failed call or when
// the RSS settled after the last unregister is more than --slack-mib above the start.
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "bench/bench_registry.h"
#include "bench/process_rss.h"
#include "client/client.h"

namespace npu::bench {
namespace {

// x: FLOAT32[16]; v0 = x + x, v_i = v_{i-1} + x, ...; the last value is the output.
v1::Graph AddChain(int64_t nodes) {
  v1::Graph g;
  v1::ValueInfo* x = g.add_inputs();
  x->set_name("x");
  x->set_dtype(v1::FLOAT32);
  x->add_shape(16);
  std::string prev = "x";
  for (int64_t i = 0; i < nodes; ++i) {
    v1::Node* n = g.add_nodes();
    const std::string out = absl::StrCat("v", i);
    n->set_name(absl::StrCat("add", i));
    n->set_op_type("Add");
    n->add_inputs(prev);
    n->add_inputs(std::string("x"));
    n->add_outputs(out);
    prev = out;
  }
  g.add_outputs(prev);
  return g;
}

struct Args {
  std::string target;
  int pid = 0;
  int64_t nodes = 100000;
  int rounds = 5;
  double slack_mib = 20;
  int settle_ms = 2500;
};

int RunGraphMemory(const Args& args) {
  client::ClientOptions options;
  options.timeout = absl::Seconds(300);
  auto client = client::Client::Connect(args.target, options);
  if (!client.ok()) {
    std::fprintf(stderr, "graph-memory: %s\n", client.status().ToString().c_str());
    return 1;
  }
  // A moment for the server to settle, then the baseline.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const int64_t start = RssKiB(args.pid);
  auto report = [&](int round, const char* step) {
    const int64_t kib = RssKiB(args.pid);
    std::printf("{\"bench\": \"graph-memory\", \"round\": %d, \"step\": \"%s\", \"nodes\": %lld, \"rss_mib\": %.1f}\n",
                round, step, static_cast<long long>(args.nodes), kib / 1024.0);
    std::fflush(stdout);
    return kib;
  };
  report(0, "start");
  v1::RegisterGraphRequest reg;
  *reg.mutable_graph() = AddChain(args.nodes);
  v1::Tensor x;
  x.set_dtype(v1::FLOAT32);
  x.add_shape(16);
  x.set_data(std::string(64, '\0'));
  int64_t end = start, peak = start;
  for (int round = 1; round <= args.rounds; ++round) {
    auto registered = (*client)->RegisterGraph(reg);
    if (!registered.ok()) {
      std::fprintf(stderr, "graph-memory: register: %s\n", registered.status().ToString().c_str());
      return 1;
    }
    peak = std::max(peak, report(round, "registered"));
    // What the registered graph keeps, once the request's own memory is given back.
    std::this_thread::sleep_for(std::chrono::milliseconds(args.settle_ms));
    report(round, "registered-settled");
    v1::RunRequest run;
    run.set_graph_id(registered->graph_id());
    v1::RunInput* in = run.add_inputs();
    in->set_name("x");
    *in->mutable_tensor() = x;
    auto ran = (*client)->Run(run);
    if (!ran.ok()) {
      std::fprintf(stderr, "graph-memory: run: %s\n", ran.status().ToString().c_str());
      return 1;
    }
    peak = std::max(peak, report(round, "ran"));
    if (auto s = (*client)->UnregisterGraph(registered->graph_id()); !s.ok()) {
      std::fprintf(stderr, "graph-memory: unregister: %s\n", s.ToString().c_str());
      return 1;
    }
    report(round, "unregistered");
    // The server returns freed memory on its own schedule (MemoryReturner: once a second).
    std::this_thread::sleep_for(std::chrono::milliseconds(args.settle_ms));
    end = report(round, "settled");
  }
  const double grew_mib = (end - start) / 1024.0;
  std::printf("{\"bench\": \"graph-memory\", \"summary\": true, \"nodes\": %lld, \"rounds\": %d, \"start_mib\": %.1f, "
              "\"peak_mib\": %.1f, \"end_mib\": %.1f, \"kept_mib\": %.1f}\n",
              static_cast<long long>(args.nodes), args.rounds, start / 1024.0, peak / 1024.0, end / 1024.0, grew_mib);
  return grew_mib > args.slack_mib ? 1 : 0;
}

std::function<int()> SetupGraphMemory(CLI::App& command) {
  auto args = std::make_shared<Args>();
  command.add_option("--target", args->target, "the server, HOST:PORT")->required();
  command.add_option("--pid", args->pid, "the server's process id, for its RSS")->required();
  command.add_option("--nodes", args->nodes, "nodes in the graph")->check(CLI::Range(1, 10000000));
  command.add_option("--rounds", args->rounds, "register / run / unregister rounds")->check(CLI::Range(1, 1000));
  command.add_option("--slack-mib", args->slack_mib, "RSS growth at the end that still passes");
  command.add_option("--settle-ms", args->settle_ms, "wait after each unregister before reading the RSS")
      ->check(CLI::Range(0, 60000));
  return [args] { return RunGraphMemory(*args); };
}

}  // namespace

NPU_BENCH("graph-memory", "a huge graph registered, run and unregistered: is the server's memory given back?",
          SetupGraphMemory);

}  // namespace npu::bench
