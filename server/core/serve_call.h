// One request inside the core, from admission to its answer: it counts the
// request in the server's counters (in flight from the start, so a drain
// that begins now waits for it or refuses it; total once admitted; failed and
// cancelled at the end) and calls the frontend's `done` exactly once.
#pragma once

#include <chrono>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "server/core/request.h"
#include "server/core/serve.h"
#include "server/core/server_state.h"

namespace npu::core {

class ServeCall {
 public:
  ServeCall(ServerState& state, Request request, ServeDone done)
      : state_(state), request_(std::move(request)), done_(std::move(done)) {
    state_.counters.runs_in_flight.fetch_add(1);
  }

  ServerState& state() { return state_; }
  Request& request() { return request_; }
  std::chrono::steady_clock::time_point started() const { return started_; }
  // The served model (name, version) the request resolved to: its answer is
  // counted in the model's metrics (inference_metrics.h).
  void SetModel(std::string name, std::string version) {
    model_ = {std::move(name), std::move(version)};
    has_model_ = true;
  }

  // UNAVAILABLE while the server drains; else counts the request in.
  absl::Status Admit();
  // Counts the request out and answers it. Call once.
  void Finish(absl::StatusOr<Response> result);

 private:
  ServerState& state_;
  Request request_;
  ServeDone done_;
  bool admitted_ = false;
  bool has_model_ = false;
  ModelVersionKey model_;
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
};

}  // namespace npu::core
