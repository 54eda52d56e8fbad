#include "client/cli/load_command.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "client/cli/cli_status.h"
#include "client/cli/command_inputs.h"
#include "client/cli/text_table.h"
#include "client/host_tensor.h"
#include "client/npy.h"

namespace npu::client::cli {
namespace {

using Clock = std::chrono::steady_clock;

absl::StatusOr<npu::v1::Tensor> RandomTensor(const npu::v1::ValueInfo& info, std::mt19937_64& rng) {
  std::vector<int64_t> shape(info.shape().begin(), info.shape().end());
  absl::StatusOr<int64_t> count = ElementCount(shape);
  if (!count.ok()) return count.status();
  if (info.dtype() == npu::v1::FLOAT16 || info.dtype() == npu::v1::FLOAT32) {
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> values(*count);
    for (float& v : values) v = dist(rng);
    return MakeFloatTensor(info.dtype(), shape, values);
  }
  const size_t size = DataTypeSize(info.dtype());
  if (size == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("graph input \"", info.name(), "\" has dtype ", info.dtype(), ", which cannot be generated"));
  }
  npu::v1::Tensor t;
  t.set_dtype(info.dtype());
  *t.mutable_shape() = info.shape();
  std::string* data = t.mutable_data();
  data->resize(*count * size);
  std::uniform_int_distribution<int> dist(0, info.dtype() == npu::v1::BOOL ? 1 : 9);  // small: valid indices too
  for (int64_t i = 0; i < *count; ++i) {
    const int64_t v = dist(rng);
    std::memcpy(data->data() + i * size, &v, size);  // little-endian: the low bytes
  }
  return t;
}

// Nearest-rank percentile of sorted values.
double Percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * sorted.size()));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

std::string ErrorsText(const LoadStep& s) {
  std::vector<std::string> parts;
  for (const auto& [code, n] : s.errors) parts.push_back(absl::StrCat(code, "=", n));
  return parts.empty() ? "-" : absl::StrJoin(parts, " ");
}

class ProgressLine {
 public:
  ProgressLine(std::ostream& out, bool enabled) : out_(out), enabled_(enabled) {}
  void Update(const std::string& text) {
    if (!enabled_) return;
    out_ << "\r\033[K" << text << std::flush;
  }
  void Clear() {
    if (enabled_) out_ << "\r\033[K" << std::flush;
  }

 private:
  std::ostream& out_;
  bool enabled_;
};

LoadStep RunStep(Client& client, const npu::v1::RunRequest& request, const LoadCommandArgs& args, int concurrency,
                 ProgressLine& progress) {
  const int64_t total = args.warmup + args.requests;
  std::atomic<int64_t> next{0}, done{0};
  std::mutex mu;
  std::vector<double> latencies_ms;
  latencies_ms.reserve(static_cast<size_t>(std::min<int64_t>(args.requests, int64_t{1} << 24)));
  LoadStep step;
  step.concurrency = concurrency;
  step.rate = args.rate;
  const auto start = Clock::now();
  const auto stop_at = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(args.duration_s));
  std::atomic<bool> stopped{false};

  auto worker = [&] {
    for (;;) {
      const int64_t i = next.fetch_add(1);
      if (i >= total || stopped.load()) return;
      // Open loop: request i is due at start + i / rate, whether or not the previous ones are done.
      Clock::time_point due = Clock::now();
      if (args.rate > 0) {
        due = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(i / args.rate));
        if (due >= stop_at) return;
        std::this_thread::sleep_until(due);
      }
      if (Clock::now() >= stop_at) return;
      absl::StatusOr<npu::v1::RunResponse> response = client.Run(request);
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - due).count();
      done.fetch_add(1);
      if (i < args.warmup) continue;
      std::lock_guard<std::mutex> lock(mu);
      if (response.ok()) {
        latencies_ms.push_back(ms);
      } else {
        ++step.errors[absl::StatusCodeToString(response.status().code())];
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < concurrency; ++t) threads.emplace_back(worker);
  // The caller's thread watches the clock and draws the progress line.
  while (done.load() < total && Clock::now() < stop_at) {
    const int64_t measured = std::max<int64_t>(0, done.load() - args.warmup);
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    progress.Update(absl::StrFormat("concurrency %d: %d/%d requests, %.1f s, %.0f req/s", concurrency, measured,
                                    args.requests, elapsed, elapsed > 0 ? done.load() / elapsed : 0.0));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  stopped.store(true);
  for (auto& t : threads) t.join();
  progress.Clear();

  step.elapsed_s = std::chrono::duration<double>(Clock::now() - start).count();
  std::sort(latencies_ms.begin(), latencies_ms.end());
  step.ok = static_cast<int64_t>(latencies_ms.size());
  step.throughput = step.elapsed_s > 0 ? step.ok / step.elapsed_s : 0;
  step.p50_ms = Percentile(latencies_ms, 50);
  step.p90_ms = Percentile(latencies_ms, 90);
  step.p99_ms = Percentile(latencies_ms, 99);
  step.max_ms = latencies_ms.empty() ? 0 : latencies_ms.back();
  double sum = 0;
  for (double v : latencies_ms) sum += v;
  step.mean_ms = latencies_ms.empty() ? 0 : sum / latencies_ms.size();
  return step;
}

}  // namespace

absl::StatusOr<std::vector<int>> ParseConcurrencyList(const std::string& text) {
  std::vector<int> levels;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    int n = 0;
    if (!absl::SimpleAtoi(part, &n) || n < 1 || n > 4096) {
      return UsageError(absl::InvalidArgumentError(
          absl::StrCat("--concurrency: \"", part, "\" is not a level from 1 to 4096")));
    }
    levels.push_back(n);
  }
  if (levels.empty()) return UsageError(absl::InvalidArgumentError("--concurrency is empty"));
  return levels;
}

bool SendsGraphInline(const Client& client, const LoadCommandArgs& args) {
  // A registered graph lives on one replica only: behind a target that names
  // several servers, round_robin would send most runs where the id is unknown.
  const std::string& t = client.target();
  return args.inline_graph || t.find(',') != std::string::npos || absl::StartsWith(t, "dns:");
}

absl::StatusOr<npu::v1::RunRequest> PrepareLoadRequest(Client& client, const LoadCommandArgs& args) {
  absl::StatusOr<npu::v1::Graph> graph = LoadGraphFile(args.graph_path);
  if (!graph.ok()) return graph.status();
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> specs = ParseInputSpecs(args.inputs);
  if (!specs.ok()) return specs.status();
  std::map<std::string, npu::v1::Tensor> given;
  for (const auto& [name, file] : *specs) {
    absl::StatusOr<npu::v1::Tensor> t = ReadNpy(file);
    if (!t.ok()) return UsageError(t.status());
    given.emplace(name, *std::move(t));
  }

  npu::v1::RunRequest request;
  request.mutable_options()->set_device(args.device);
  const google::protobuf::RepeatedPtrField<npu::v1::ValueInfo> graph_inputs = graph->inputs();
  if (SendsGraphInline(client, args)) {
    *request.mutable_graph() = *std::move(graph);
  } else {
    npu::v1::RegisterGraphRequest reg;
    *reg.mutable_graph() = *std::move(graph);
    reg.set_device(args.device);
    absl::StatusOr<npu::v1::RegisterGraphResponse> registered = client.RegisterGraph(reg);
    if (!registered.ok()) return registered.status();
    request.set_graph_id(registered->graph_id());
  }
  std::mt19937_64 rng(args.seed);
  for (const npu::v1::ValueInfo& info : graph_inputs) {
    npu::v1::RunInput* in = request.add_inputs();
    in->set_name(info.name());
    auto it = given.find(info.name());
    if (it != given.end()) {
      *in->mutable_tensor() = std::move(it->second);
      given.erase(it);
      continue;
    }
    absl::StatusOr<npu::v1::Tensor> t = RandomTensor(info, rng);
    if (!t.ok()) return t.status();
    *in->mutable_tensor() = *std::move(t);
  }
  if (!given.empty()) {
    return UsageError(absl::InvalidArgumentError(
        absl::StrCat("--input \"", given.begin()->first, "\" is not an input of the graph")));
  }
  return request;
}

absl::StatusOr<std::vector<LoadStep>> RunLoad(Client& client, const npu::v1::RunRequest& request,
                                              const LoadCommandArgs& args, std::ostream& progress_out) {
  if (args.requests < 1 || args.duration_s <= 0 || args.warmup < 0 || args.rate < 0) {
    return UsageError(absl::InvalidArgumentError(
        "--requests must be >= 1, --duration > 0, --warmup >= 0 and --rate >= 0: a load is always bounded"));
  }
  ProgressLine progress(progress_out, args.progress);
  std::vector<LoadStep> steps;
  for (int c : args.concurrency) steps.push_back(RunStep(client, request, args, c, progress));
  return steps;
}

absl::Status PrintLoadReport(const std::vector<LoadStep>& steps, const std::string& format, std::ostream& out) {
  if (format == "json") {
    out << "[";
    for (size_t i = 0; i < steps.size(); ++i) {
      const LoadStep& s = steps[i];
      std::vector<std::string> errors;
      for (const auto& [code, n] : s.errors) errors.push_back(absl::StrFormat("\"%s\": %d", code, n));
      out << (i ? ",\n " : "")
          << absl::StrFormat(
                 "{\"concurrency\": %d, \"rate\": %g, \"ok\": %d, \"errors\": {%s}, \"elapsed_s\": %.3f, "
                 "\"throughput\": %.2f, \"p50_ms\": %.3f, \"p90_ms\": %.3f, \"p99_ms\": %.3f, \"max_ms\": %.3f, "
                 "\"mean_ms\": %.3f}",
                 s.concurrency, s.rate, s.ok, absl::StrJoin(errors, ", "), s.elapsed_s, s.throughput, s.p50_ms,
                 s.p90_ms, s.p99_ms, s.max_ms, s.mean_ms);
    }
    out << "]\n";
  } else if (format == "csv") {
    out << "concurrency,rate,ok,errors,elapsed_s,throughput,p50_ms,p90_ms,p99_ms,max_ms,mean_ms\n";
    for (const LoadStep& s : steps) {
      out << absl::StrFormat("%d,%g,%d,%s,%.3f,%.2f,%.3f,%.3f,%.3f,%.3f,%.3f\n", s.concurrency, s.rate, s.ok,
                             ErrorsText(s), s.elapsed_s, s.throughput, s.p50_ms, s.p90_ms, s.p99_ms, s.max_ms,
                             s.mean_ms);
    }
  } else if (format == "table") {
    using A = TextTable::Align;
    TextTable table({"concurrency", "rate", "ok", "errors", "seconds", "req/s", "p50 ms", "p90 ms", "p99 ms",
                     "max ms"},
                    {A::kRight, A::kRight, A::kRight, A::kLeft, A::kRight, A::kRight, A::kRight, A::kRight,
                     A::kRight, A::kRight});
    for (const LoadStep& s : steps) {
      table.AddRow({absl::StrCat(s.concurrency), s.rate > 0 ? absl::StrFormat("%g/s", s.rate) : "max",
                    absl::StrCat(s.ok), ErrorsText(s), absl::StrFormat("%.2f", s.elapsed_s),
                    absl::StrFormat("%.1f", s.throughput), absl::StrFormat("%.3f", s.p50_ms),
                    absl::StrFormat("%.3f", s.p90_ms), absl::StrFormat("%.3f", s.p99_ms),
                    absl::StrFormat("%.3f", s.max_ms)});
    }
    table.Print(out);
  } else {
    return UsageError(absl::InvalidArgumentError(
        absl::StrCat("--format \"", format, "\" is not one of table, json, csv")));
  }
  return absl::OkStatus();
}

absl::Status RunLoadCommand(Client& client, const LoadCommandArgs& args, std::ostream& out,
                            std::ostream& progress_out) {
  if (args.format != "table" && args.format != "json" && args.format != "csv") {
    return PrintLoadReport({}, args.format, out);
  }
  absl::StatusOr<npu::v1::RunRequest> request = PrepareLoadRequest(client, args);
  if (!request.ok()) return request.status();
  absl::StatusOr<std::vector<LoadStep>> steps = RunLoad(client, *request, args, progress_out);
  if (!request->graph_id().empty()) {
    client.UnregisterGraph(request->graph_id()).IgnoreError();  // best effort: the server forgets it anyway on exit
  }
  if (!steps.ok()) return steps.status();
  return PrintLoadReport(*steps, args.format, out);
}

}  // namespace npu::client::cli
