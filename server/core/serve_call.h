// One request inside the core, from admission to its answer: it counts the
// request in the server's counters (in flight from the start, so a drain
// that begins now waits for it or refuses it; total once admitted; failed and
// cancelled at the end) and calls the frontend's `done` exactly once.
#pragma once

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

  // UNAVAILABLE while the server drains; else counts the request in.
  absl::Status Admit();
  // Counts the request out and answers it. Call once.
  void Finish(absl::StatusOr<Response> result);

 private:
  ServerState& state_;
  Request request_;
  ServeDone done_;
  bool admitted_ = false;
};

}  // namespace npu::core
