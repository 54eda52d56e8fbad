// npu-bench models: real models on the server against ONNX Runtime (the
// anchor) and torch eager fp32 on the same cores, in one run, side by side.
//
//   npu-bench models [--models resnet18,mobilenet_v2,efficientnet_b0,regnet_y_400mf,bert_layer]
//                    [--threads 2] [--reps 9] [--no-ort]
//
// A child process (bench/models/torch_models.py, Debian's torch and torchvision)
// exports each model to ONNX (opset 17) and times torch on request; a second
// (bench/ort/ort_models.js, onnxruntime-node from npm, installed by
// bench/ort/setup.sh into the build on first use) loads the same files with
// ONNX Runtime's CPU execution provider, intra-op threads = ours, graph
// optimisations on. This process imports the ONNX file (onnx/), registers it
// with an in-process server whose device computes on `threads` host threads,
// and alternates: one Run of the registered graph, one torch forward pass, one
// ORT inference, each after a pause (so idle thread teams go to sleep before
// the next side starts). The server's figure is the profile's host_time_us (the
// graph's compute on the host, device model included, without the transfer).
// Medians of `reps` rounds after two warm-up rounds, with min and max as the
// spread; the result is checked against torch's output (fp16 operands on the
// Cube make it differ by ~1e-3), ORT's too.
//
// One JSON line per (model, threads):
//   {"bench":"models","model":...,"threads":T,"npu_ms":...,"npu_min_ms":...,"npu_max_ms":...,
//    "ort_ms":...,"ort_min_ms":...,"ort_max_ms":...,"torch_ms":...,"torch_min_ms":...,"torch_max_ms":...,
//    "ratio":...,"target":"<=1.00","met":...,"torch_ratio":...,"model_ms":...,"arena_mib":...,
//    "max_rel_err":...,"ort_max_rel_err":...}
// ratio = npu_ms / ort_ms (null, and met false, without ORT: --no-ort or no
// npm), torch_ratio = npu_ms / torch_ms. model_ms is the part of npu_ms the
// device model took (the profile's model_time_us: scheduling, the L2, the
// profile), the rest is compute. A last line per thread count gives the
// geometric mean of the ratios:
//   {"bench":"models","threads":T,"geomean_ratio":...,"geomean_torch_ratio":...,"models":N}
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_registry.h"
#include "client/client.h"
#include "client/npy.h"
#include "client/model_file.h"
#include "server/rpc/npu_server.h"
#include "server/core/request_log.h"

namespace npu::bench {
namespace {

constexpr int kMaxMessage = 1 << 30;

// An anchor (torch, ONNX Runtime): a child process given `program script dir
// threads models...`, fed commands on its stdin, answering one line each.
class AnchorChild {
 public:
  bool Start(const std::string& program, const std::string& script, const std::string& dir, int threads,
             const std::vector<std::string>& models) {
    int to_child[2], from_child[2];
    if (pipe(to_child) != 0 || pipe(from_child) != 0) return false;
    std::vector<std::string> args = {program, script, dir, std::to_string(threads)};
    args.insert(args.end(), models.begin(), models.end());
    std::vector<char*> argv;  // built before fork: the child only calls execvp
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_ = fork();
    if (pid_ < 0) return false;
    if (pid_ == 0) {
      dup2(to_child[0], 0);
      dup2(from_child[1], 1);
      close(to_child[1]);
      close(from_child[0]);
      execvp(program.c_str(), argv.data());
      _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    in_ = fdopen(to_child[1], "w");
    out_ = fdopen(from_child[0], "r");
    return ReadLine() == "ready";
  }

  // Seconds of one forward pass, or < 0 when the child failed.
  double Time(const std::string& model) { return Ask("time", model); }
  // Its output's max relative error against torch's, or < 0.
  double Check(const std::string& model) { return Ask("check", model); }

  ~AnchorChild() {
    if (in_ != nullptr) {
      std::fputs("quit\n", in_);
      std::fclose(in_);
    }
    if (out_ != nullptr) std::fclose(out_);
    if (pid_ > 0) waitpid(pid_, nullptr, 0);
  }

 private:
  double Ask(const char* command, const std::string& model) {
    std::fprintf(in_, "%s %s\n", command, model.c_str());
    std::fflush(in_);
    const std::string line = ReadLine();
    return line.empty() ? -1 : std::atof(line.c_str());
  }

  std::string ReadLine() {
    char buf[256];
    if (out_ == nullptr || std::fgets(buf, sizeof buf, out_) == nullptr) return "";
    std::string s(buf);
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
    return s;
  }

  pid_t pid_ = -1;
  FILE* in_ = nullptr;
  FILE* out_ = nullptr;
};

struct Spread {
  double median = 0, min = 0, max = 0;
};

Spread Summarise(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  if (v.empty()) return {};
  return Spread{v[v.size() / 2], v.front(), v.back()};
}

// max |got - want| / max |want| over the output.
double MaxRelativeError(const v1::Tensor& got, const v1::Tensor& want) {
  if (got.dtype() != v1::FLOAT32 || want.dtype() != v1::FLOAT32 || got.data().size() != want.data().size()) {
    return -1;
  }
  const size_t n = got.data().size() / 4;
  const float* g = reinterpret_cast<const float*>(got.data().data());
  const float* w = reinterpret_cast<const float*>(want.data().data());
  double err = 0, scale = 0;
  for (size_t i = 0; i < n; ++i) {
    err = std::max(err, std::fabs(static_cast<double>(g[i]) - w[i]));
    scale = std::max(scale, std::fabs(static_cast<double>(w[i])));
  }
  return scale > 0 ? err / scale : err;
}

struct ModelsArgs {
  std::vector<std::string> models = {"resnet18",      "mobilenet_v2", "efficientnet_b0", "regnet_y_400mf",
                                     "convnext_tiny", "resnet50",     "bert_layer",      "gpt_block"};
  std::vector<int> thread_counts = {2};
  int reps = 9;
  std::string python = NPU_BENCH_PYTHON;
  std::string script = NPU_SOURCE_DIR "/bench/models/torch_models.py";
  std::string dir;  // where the ONNX files go; default: a fresh temporary directory
  bool breakdown = false;  // also print the server's host time per op type (last run)
  bool ort = true;         // ONNX Runtime as the anchor
  std::string ort_dir = NPU_BENCH_ORT_DIR;  // where bench/ort/setup.sh installs onnxruntime-node
};

const char* const kModels[] = {"resnet18",       "mobilenet_v2", "efficientnet_b0", "regnet_y_400mf",
                               "convnext_tiny",  "resnet50",     "bert_layer",      "gpt_block"};

// Installs ONNX Runtime on first use (idempotent, quick once installed); false
// with the reason on stderr when it cannot be had.
bool SetUpOrt(const std::string& dir) {
  const std::string setup = NPU_SOURCE_DIR "/bench/ort/setup.sh";
  const pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    dup2(2, 1);  // npm's chatter stays off the JSON lines
    execl("/bin/bash", "bash", setup.c_str(), dir.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

std::string JsonNumber(double v, const char* format = "%.2f") {
  if (!(v >= 0) || !std::isfinite(v)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// {"Conv": ms, ...}: host time per op type in one run's profile, largest first.
std::string Breakdown(const v1::Profile& profile) {
  std::map<std::string, double> by_type;
  for (const v1::NodeProfile& n : profile.nodes()) by_type[n.op_type()] += n.host_time_us() / 1e3;
  std::vector<std::pair<double, std::string>> sorted;
  for (const auto& [type, ms] : by_type) sorted.push_back({ms, type});
  std::sort(sorted.rbegin(), sorted.rend());
  std::string out = "{";
  for (const auto& [ms, type] : sorted) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%s\"%s\":%.2f", out.size() > 1 ? "," : "", type.c_str(), ms);
    out += buf;
  }
  return out + "}";
}

int RunModelsBench(const ModelsArgs& args) {
  core::RequestLog::SetLevel("off").IgnoreError();
  std::string dir = args.dir;
  if (dir.empty()) {
    char tmpl[] = "/tmp/npu-bench-models-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) return 1;
    dir = tmpl;
  }
  bool ort_ready = args.ort && SetUpOrt(args.ort_dir);
  if (args.ort && !ort_ready) {
    std::fprintf(stderr, "models: no ONNX Runtime anchor (bench/ort/setup.sh %s failed): ratio is null, torch_ratio stays\n",
                 args.ort_dir.c_str());
  }
  for (int threads : args.thread_counts) {
    AnchorChild torch;  // exports the models first: ORT loads its files
    if (!torch.Start(args.python, args.script, dir, threads, args.models)) {
      std::fprintf(stderr, "models: %s %s did not start (python3-torch and python3-torchvision installed?)\n",
                   args.python.c_str(), args.script.c_str());
      return 1;
    }
    AnchorChild ort;
    if (ort_ready && !ort.Start("node", args.ort_dir + "/ort_models.js", dir, threads, args.models)) {
      std::fprintf(stderr, "models: ONNX Runtime (node %s/ort_models.js) did not start: ratio is null\n",
                   args.ort_dir.c_str());
      ort_ready = false;
    }
    double log_ratio = 0, log_torch_ratio = 0;
    int ratios = 0, torch_ratios = 0;
    rpc::ServerConfig config;
    config.listen = "127.0.0.1:0";
    config.device_options.omp_threads = threads;
    config.limits.max_message_bytes = kMaxMessage;
    auto server = rpc::NpuServer::Start(config);
    if (!server.ok()) {
      std::fprintf(stderr, "models: %s\n", std::string(server.status().message()).c_str());
      return 1;
    }
    client::ClientOptions options;
    options.max_send_message_bytes = kMaxMessage;
    options.max_receive_message_bytes = kMaxMessage;
    auto npu = client::Client::Connect("127.0.0.1:" + std::to_string((*server)->port()), options);
    if (!npu.ok()) return 1;

    for (const std::string& model : args.models) {
      auto file = client::ReadModelFile(dir + "/" + model + ".onnx");  // the server imports it
      auto input = client::ReadNpy(dir + "/" + model + ".input.npy");
      auto ref = client::ReadNpy(dir + "/" + model + ".ref.npy");
      if (!file.ok() || !input.ok() || !ref.ok()) {
        const absl::Status s = !file.ok() ? file.status() : !input.ok() ? input.status() : ref.status();
        std::printf("{\"bench\":\"models\",\"model\":\"%s\",\"threads\":%d,\"error\":\"%s\"}\n", model.c_str(),
                    threads, std::string(s.message()).c_str());
        std::fflush(stdout);
        continue;
      }
      auto registered = (*npu)->RegisterModel(*file);
      if (!registered.ok()) {
        std::printf("{\"bench\":\"models\",\"model\":\"%s\",\"threads\":%d,\"error\":\"%s\"}\n", model.c_str(),
                    threads, std::string(registered.status().message()).c_str());
        std::fflush(stdout);
        continue;
      }
      v1::RunRequest run;
      run.set_graph_id(registered->graph_id());
      run.mutable_options()->set_profile(true);
      v1::RunInput* in = run.add_inputs();
      in->set_name("input");
      *in->mutable_tensor() = *std::move(input);

      std::vector<double> ours, theirs, ort_times, modeled;
      double err = -1;
      const double ort_err = ort_ready ? ort.Check(model) : -1;
      uint64_t arena = 0;
      std::string breakdown;
      bool failed = false;
      for (int r = -2; r < args.reps && !failed; ++r) {
        auto resp = (*npu)->Run(run);
        if (!resp.ok()) {
          std::printf("{\"bench\":\"models\",\"model\":\"%s\",\"threads\":%d,\"error\":\"%s\"}\n", model.c_str(),
                      threads, std::string(resp.status().message()).c_str());
          failed = true;
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        const double torch_s = torch.Time(model);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        if (torch_s < 0) return 1;
        const double ort_s = ort_ready ? ort.Time(model) : 0;
        if (ort_ready) std::this_thread::sleep_for(std::chrono::milliseconds(100));
        if (ort_s < 0) {
          std::fprintf(stderr, "models: ONNX Runtime failed on %s: ratio is null from here\n", model.c_str());
          ort_ready = false;
        }
        if (r < 0) continue;  // warm-up
        ours.push_back(resp->profile().host_time_us() / 1e3);
        modeled.push_back(resp->profile().model_time_us() / 1e3);
        theirs.push_back(torch_s * 1e3);
        if (ort_ready) ort_times.push_back(ort_s * 1e3);
        err = MaxRelativeError(resp->outputs(0).tensor(), *ref);
        arena = resp->profile().arena_bytes();
        if (args.breakdown) breakdown = Breakdown(resp->profile());
      }
      if (failed) continue;
      const Spread a = Summarise(ours), b = Summarise(theirs), o = Summarise(ort_times), m = Summarise(modeled);
      const bool have_ort = ort_times.size() == ours.size() && !ours.empty();
      const double ratio = have_ort ? a.median / o.median : -1, torch_ratio = a.median / b.median;
      if (have_ort) log_ratio += std::log(ratio), ++ratios;
      log_torch_ratio += std::log(torch_ratio), ++torch_ratios;
      std::printf(
          "{\"bench\":\"models\",\"model\":\"%s\",\"threads\":%d,\"npu_ms\":%.2f,\"npu_min_ms\":%.2f,"
          "\"npu_max_ms\":%.2f,\"ort_ms\":%s,\"ort_min_ms\":%s,\"ort_max_ms\":%s,\"torch_ms\":%.2f,"
          "\"torch_min_ms\":%.2f,\"torch_max_ms\":%.2f,\"ratio\":%s,\"target\":\"<=1.00\",\"met\":%s,"
          "\"torch_ratio\":%.3f,\"model_ms\":%.2f,\"arena_mib\":%.1f,\"max_rel_err\":%.2g,"
          "\"ort_max_rel_err\":%s}\n",
          model.c_str(), threads, a.median, a.min, a.max, JsonNumber(have_ort ? o.median : -1).c_str(),
          JsonNumber(have_ort ? o.min : -1).c_str(), JsonNumber(have_ort ? o.max : -1).c_str(), b.median, b.min,
          b.max, JsonNumber(ratio, "%.3f").c_str(), have_ort && ratio <= 1.0 ? "true" : "false", torch_ratio,
          m.median, arena / 1048576.0, err, JsonNumber(ort_err, "%.2g").c_str());
      if (args.breakdown) {
        std::printf("{\"bench\":\"models\",\"model\":\"%s\",\"threads\":%d,\"host_ms_by_op\":%s}\n", model.c_str(),
                    threads, breakdown.c_str());
      }
      std::fflush(stdout);
    }
    std::printf("{\"bench\":\"models\",\"threads\":%d,\"geomean_ratio\":%s,\"geomean_torch_ratio\":%s,"
                "\"models\":%d}\n",
                threads, JsonNumber(ratios > 0 ? std::exp(log_ratio / ratios) : -1, "%.3f").c_str(),
                JsonNumber(torch_ratios > 0 ? std::exp(log_torch_ratio / torch_ratios) : -1, "%.3f").c_str(),
                torch_ratios);
    std::fflush(stdout);
  }
  return 0;
}

std::function<int()> SetupModelsBench(CLI::App& command) {
  auto args = std::make_shared<ModelsArgs>();
  command.add_option("--models", args->models, "models, comma-separated")
      ->delimiter(',')
      ->check(CLI::IsMember(std::vector<std::string>(std::begin(kModels), std::end(kModels))))
      ->capture_default_str();
  command.add_option("--threads", args->thread_counts, "host thread counts (server and torch alike)")
      ->delimiter(',')
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  command.add_option("--reps", args->reps, "timed rounds (the median is printed)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  command.add_option("--python", args->python, "python with torch and torchvision")->capture_default_str();
  command.add_option("--dir", args->dir, "directory for the exported models (default: a new one in /tmp)");
  command.add_flag("--breakdown", args->breakdown, "also print the server's host time per op type");
  command.add_flag("!--no-ort", args->ort, "leave out the ONNX Runtime anchor (ratio is then null)");
  command.add_option("--ort-dir", args->ort_dir, "where bench/ort/setup.sh installs onnxruntime-node")
      ->capture_default_str();
  return [args] { return RunModelsBench(*args); };
}

}  // namespace

NPU_BENCH("models", "real models (ONNX from torch) on the server against ONNX Runtime and torch eager fp32",
          SetupModelsBench);

}  // namespace npu::bench
