// The core's one entry for a request, whichever frontend translated it
// (request.h). Serve admits it (not while draining), counts it (in flight,
// total, failed, cancelled), resolves its target for the tenant (a served
// model, a registered graph by id, an inline graph, a trainer), picks the
// device, selects the plan (cached per preset and bound input shapes), binds
// the inputs and outputs, and hands the run to the runner (graph/runner.h),
// or a model's dynamic batcher; the answer comes back through `done`.
//
// `done` runs exactly once: on the thread that ends the run (the device's
// worker, the caller for a small run, the thread that cancelled it) or on
// this one when the request is refused. An inference returns at once; a
// trainer call (Step, Evaluate) returns once it is done, since a trainer waits
// for its devices. The request's tensors may view the frontend's bytes; they
// must stay alive until `done`. The run is counted out before `done`, so a
// client that reads its answer and then the counters sees it finished.
#pragma once

#include <functional>

#include "absl/status/statusor.h"
#include "server/core/request.h"
#include "server/core/server_state.h"

namespace npu::core {

using ServeDone = std::function<void(absl::StatusOr<Response>)>;

void Serve(ServerState& state, Request request, ServeDone done);

}  // namespace npu::core
