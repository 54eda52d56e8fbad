// Serve's path for a model with dynamic batching (its config.pbtxt sets
// max_batch_size > 0 and dynamic_batching): the request is bound, checked as a
// batch of rows, and queued on the model version's batcher
// (dynamic_batcher.h). The batch runner concatenates a batch's inputs along
// dim 0 into one run of the plan for the batched shapes (the plan cache's
// entry for that signature), and splits every output back by rows: each
// request's rows are the bits it gets run alone, since every row's results
// are computed by the same ops in the same order whatever the other rows.
// A batched run's profile is shared by its requests.
#pragma once

#include <memory>
#include <string>

#include "server/core/dynamic_batcher.h"
#include "server/core/input_binding.h"
#include "server/core/registered_graph.h"
#include "server/core/serve_call.h"
#include "server/core/server_state.h"

namespace npu::core {

struct BatchedModel {
  std::shared_ptr<RegisteredGraph> graph;
  BindSubject subject;
  std::string name, version;
};

// Binds the call's request and queues it on `batcher`; the call is answered
// by the batch it joins, or refused here (bad inputs, a batch dim past
// max_batch_size, inputs whose batch dims differ).
void EnqueueBatched(const std::shared_ptr<ServeCall>& call, BatchedModel model, DynamicBatcher& batcher);

// The runner of every model's batcher on this server.
DynamicBatcher::Runner BatchRunner(ServerState& state);

}  // namespace npu::core
