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
  state_.counters.runs_in_flight.fetch_sub(1);
  done_(std::move(result));
}

}  // namespace npu::core
