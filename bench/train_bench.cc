// npu-bench train: the cost of a training step (issue 22's measurement). One
// Step of the server's trainer (forward, loss, backward, SGD update) against
// torch eager's forward + backward + optimizer.step() on the same threads,
// for resnet18 at 64x64 and a transformer encoder layer, at O0 and O2.
//
// The server runs in this process; bench/train_step.py (torch is the anchor,
// so the client side is Python) exports each model, times torch and drives
// the trainer through the Python client, printing one JSON line per model and
// amp level:
//   {"bench":"train","model":...,"amp":"O0","threads":2,"batch":16,"npu_ms":...,"server_ms":...,
//    "torch_ms":...,"ratio":...,"target":"<=2.00","met":true}
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_registry.h"
#include "server/core/request_log.h"
#include "server/rpc/npu_server.h"

namespace npu::bench {
namespace {

struct TrainArgs {
  int threads = 2;
  int steps = 10;
  int batch = 16;
  std::string python = NPU_BENCH_PYTHON;
  std::string script = NPU_SOURCE_DIR "/bench/train_step.py";
  std::string python_path = NPU_BENCH_PYTHONPATH;  // the build's npuserve package
};

// Runs the script against `target` and returns its exit code; its stdout is ours.
// Everything the child needs is built before fork: this process has the
// server's threads, so the child may only exec.
int RunScript(const TrainArgs& args, const std::string& target) {
  std::vector<std::string> argv = {args.python,      args.script,  "--target", target,
                                   "--threads",      std::to_string(args.threads),
                                   "--steps",        std::to_string(args.steps),
                                   "--batch",        std::to_string(args.batch),
                                   "--json"};
  std::vector<std::string> env;
  const char* old = std::getenv("PYTHONPATH");
  env.push_back("PYTHONPATH=" + (old != nullptr && *old != '\0' ? args.python_path + ":" + old : args.python_path));
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "PYTHONPATH=", 11) != 0) env.emplace_back(*e);
  }
  std::vector<char*> raw_argv, raw_env;
  for (std::string& a : argv) raw_argv.push_back(a.data());
  raw_argv.push_back(nullptr);
  for (std::string& e : env) raw_env.push_back(e.data());
  raw_env.push_back(nullptr);
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid < 0) return 1;
  if (pid == 0) {
    execve(raw_argv[0], raw_argv.data(), raw_env.data());
    _exit(127);  // the parent reports it
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return 1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int RunTrainBench(const TrainArgs& args) {
  core::RequestLog::SetLevel("off").IgnoreError();
  rpc::ServerConfig config;
  config.listen = "127.0.0.1:0";
  config.device_options.omp_threads = args.threads;
  config.limits.max_message_bytes = 1 << 30;
  auto server = rpc::NpuServer::Start(config);
  if (!server.ok()) {
    std::fprintf(stderr, "train: %s\n", std::string(server.status().message()).c_str());
    return 1;
  }
  const int rc = RunScript(args, "127.0.0.1:" + std::to_string((*server)->port()));
  if (rc != 0) {
    std::fprintf(stderr, "train: %s %s exited with %d (python3-torch and python3-torchvision installed?)\n",
                 args.python.c_str(), args.script.c_str(), rc);
  }
  return rc;
}

std::function<int()> SetupTrainBench(CLI::App& command) {
  auto args = std::make_shared<TrainArgs>();
  command.add_option("--threads", args->threads, "host threads (server and torch alike)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  command.add_option("--steps", args->steps, "timed steps after two warm-ups (the median is printed)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  command.add_option("--batch", args->batch, "images (sequences) per step")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  command.add_option("--python", args->python, "python with torch and torchvision")->capture_default_str();
  return [args] { return RunTrainBench(*args); };
}

}  // namespace

NPU_BENCH("train", "a training step (forward, backward, SGD) against torch eager's on the same threads",
          SetupTrainBench);

}  // namespace npu::bench
