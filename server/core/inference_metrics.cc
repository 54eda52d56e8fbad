#include "server/core/inference_metrics.h"

#include "absl/strings/str_cat.h"

namespace npu::core {
namespace {

uint64_t Micros(std::chrono::nanoseconds t) {
  return t.count() <= 0 ? 0 : static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(t).count());
}

std::string Labels(const ModelVersionKey& key) {
  // Model names come from folder names or registered graphs: quote what
  // Prometheus's text format needs quoted.
  auto escape = [](const std::string& v) {
    std::string out;
    for (char c : v) {
      if (c == '\\' || c == '"') out += '\\';
      if (c == '\n') {
        out += "\\n";
        continue;
      }
      out += c;
    }
    return out;
  };
  return absl::StrCat("{model=\"", escape(key.first), "\",version=\"", escape(key.second), "\"}");
}

}  // namespace

void InferenceMetrics::ObserveRequest(const ModelVersionKey& model, const Sample& sample) {
  MutexLock lock(&mu_);
  Series& s = series_[model];
  if (!sample.ok) {
    ++s.failure;
    return;
  }
  ++s.success;
  s.count += static_cast<uint64_t>(sample.inferences > 0 ? sample.inferences : 0);
  s.request_us += Micros(sample.request);
  s.queue_us += Micros(sample.queue);
  s.input_us += Micros(sample.compute_input);
  s.infer_us += Micros(sample.compute_infer);
  s.output_us += Micros(sample.compute_output);
}

void InferenceMetrics::ObserveExecution(const ModelVersionKey& model) {
  MutexLock lock(&mu_);
  ++series_[model].exec_count;
}

std::string InferenceMetrics::Render(const std::map<ModelVersionKey, size_t>& pending) const {
  struct Family {
    const char* name;
    const char* help;
    uint64_t Series::*value;
  };
  static constexpr Family kCounters[] = {
      {"nv_inference_request_success", "Number of successful inference requests, all batch sizes",
       &Series::success},
      {"nv_inference_request_failure", "Number of failed inference requests, all batch sizes", &Series::failure},
      {"nv_inference_count", "Number of inferences performed (a request of batch size N counts N)", &Series::count},
      {"nv_inference_exec_count", "Number of model executions performed (a dynamic batch is one)",
       &Series::exec_count},
      {"nv_inference_request_duration_us", "Cumulative inference request duration in microseconds",
       &Series::request_us},
      {"nv_inference_queue_duration_us", "Cumulative inference queuing duration in microseconds", &Series::queue_us},
      {"nv_inference_compute_input_duration_us", "Cumulative compute input duration in microseconds",
       &Series::input_us},
      {"nv_inference_compute_infer_duration_us", "Cumulative compute inference duration in microseconds",
       &Series::infer_us},
      {"nv_inference_compute_output_duration_us", "Cumulative inference compute output duration in microseconds",
       &Series::output_us},
  };
  std::string out;
  MutexLock lock(&mu_);
  for (const Family& f : kCounters) {
    absl::StrAppend(&out, "# HELP ", f.name, " ", f.help, "\n# TYPE ", f.name, " counter\n");
    for (const auto& [key, s] : series_) absl::StrAppend(&out, f.name, Labels(key), " ", s.*f.value, "\n");
  }
  absl::StrAppend(&out,
                  "# HELP nv_inference_pending_request_count Instantaneous number of pending requests awaiting "
                  "execution per-model.\n# TYPE nv_inference_pending_request_count gauge\n");
  std::map<ModelVersionKey, size_t> all = pending;
  for (const auto& [key, s] : series_) all.emplace(key, 0);
  for (const auto& [key, n] : all) absl::StrAppend(&out, "nv_inference_pending_request_count", Labels(key), " ", n, "\n");
  return out;
}

}  // namespace npu::core
