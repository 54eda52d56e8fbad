#include "server/core/serve_call.h"

namespace npu::core {

absl::Status ServeCall::Admit() {
  if (auto s = state_.CheckAdmitting(); !s.ok()) return s;
  state_.counters.runs_total.fetch_add(1);
  admitted_ = true;
  return absl::OkStatus();
}

void ServeCall::Finish(absl::StatusOr<Response> result) {
  if (result.ok()) {
    result->id = request_.id;
  } else {
    const absl::StatusCode code = result.status().code();
    if (code == absl::StatusCode::kDeadlineExceeded || code == absl::StatusCode::kCancelled) {
      state_.counters.runs_cancelled.fetch_add(1);
    }
    if (admitted_) state_.counters.runs_failed.fetch_add(1);
  }
  if (has_model_) {
    InferenceMetrics::Sample sample{.ok = result.ok()};
    if (result.ok()) {
      const Execution& e = result->execution;
      sample.inferences = e.rows;
      sample.request = std::chrono::steady_clock::now() - started_;
      sample.queue = e.queue;
      sample.compute_input = e.compute_input;
      sample.compute_infer = e.compute_infer;
      sample.compute_output = e.compute_output;
    }
    state_.inference_metrics.ObserveRequest(model_, sample);
  }
  for (const RequestInput& in : request_.inputs) {
    if (in.release && !in.handle.empty()) state_.tensors.Free(request_.tenant, in.handle).IgnoreError();
  }
  state_.counters.runs_in_flight.fetch_sub(1);
  done_(std::move(result));
}

}  // namespace npu::core
