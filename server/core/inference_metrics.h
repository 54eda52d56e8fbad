// Triton's per-model inference metrics (its names and meanings, so dashboards
// and autoscalers built for Triton read them), labelled model and version:
// requests that succeeded and failed, inferences (batch rows) and executions
// (device runs: a dynamic batch is one), and the cumulative microseconds of
// request, queue and compute (input, infer, output) time of the successful
// requests. Served on /metrics beside npu_*; docs/serving.md lists them.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "base/mutex.h"

namespace npu::core {

using ModelVersionKey = std::pair<std::string, std::string>;  // model, version

class InferenceMetrics {
 public:
  struct Sample {
    bool ok = false;
    int64_t inferences = 1;  // the request's batch rows
    std::chrono::nanoseconds request{0}, queue{0}, compute_input{0}, compute_infer{0}, compute_output{0};
  };
  // One request to a model, answered.
  void ObserveRequest(const ModelVersionKey& model, const Sample& sample);
  // One execution of a model (a device run, however many requests shared it).
  void ObserveExecution(const ModelVersionKey& model);

  // Prometheus text: the nv_inference_* families; `pending` is
  // nv_inference_pending_request_count (requests waiting in a batcher).
  std::string Render(const std::map<ModelVersionKey, size_t>& pending) const;

 private:
  struct Series {
    uint64_t success = 0, failure = 0, count = 0, exec_count = 0;
    uint64_t request_us = 0, queue_us = 0, input_us = 0, infer_us = 0, output_us = 0;
  };
  mutable Mutex mu_;
  std::map<ModelVersionKey, Series> series_ ABSL_GUARDED_BY(mu_);
};

}  // namespace npu::core
