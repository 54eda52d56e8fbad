#include "server/core/trainer_calls.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace npu::core {
namespace {

// A batch tensor, inline (viewed in the request) or a tenant's handle.
absl::StatusOr<graph::HostTensor> BatchTensor(ServerState& state, Request& req, const char* name) {
  for (RequestInput& in : req.inputs) {
    if (in.name != name) continue;
    if (in.handle.empty()) return std::move(in.tensor);
    auto stored = state.tensors.Get(req.tenant, in.handle);
    if (!stored.ok()) return stored.status();
    return std::move(stored->tensor);
  }
  return absl::InvalidArgumentError(absl::StrCat("the request has no ", name, " (tensor or handle)"));
}

absl::StatusOr<Response> Step(train::Trainer& trainer, const graph::HostTensor& x, const graph::HostTensor& labels,
                              const Request& req) {
  auto r = trainer.Step(x, labels, req.profile, req.cancel);
  if (!r.ok()) return r.status();
  Response resp;
  resp.values = {{"step", r->step},
                 {"loss", r->loss},
                 {"loss_scale", r->loss_scale},
                 {"next_loss_scale", r->next_loss_scale},
                 {"skipped", r->skipped},
                 {"overflow_elements", static_cast<int64_t>(r->overflow_elements)}};
  resp.profiles = std::move(r->profiles);
  resp.execution.batch_size = x.type().shape.empty() ? 1 : x.type().shape[0];
  return resp;
}

absl::StatusOr<Response> Evaluate(train::Trainer& trainer, const graph::HostTensor& x,
                                  const graph::HostTensor& labels, const Request& req) {
  auto r = trainer.Evaluate(x, labels, req.cancel);
  if (!r.ok()) return r.status();
  Response resp;
  resp.values = {{"loss", r->loss}, {"correct", r->correct}, {"count", r->count}};
  if (trainer.config().loss == train::LossKind::kCrossEntropy && r->count > 0) {
    resp.values["accuracy"] = static_cast<double>(r->correct) / static_cast<double>(r->count);
  }
  if (req.return_predictions) {
    const int64_t per_row = r->count == 0 ? 0 : static_cast<int64_t>(r->predictions.size()) / r->count;
    graph::HostTensor p = graph::HostTensor::Allocate({v1::FLOAT32, {r->count, per_row}});
    std::memcpy(p.mutable_data(), r->predictions.data(), r->predictions.size() * sizeof(float));
    resp.outputs.push_back({"predictions", std::move(p), {}});
  }
  resp.execution.batch_size = r->count;
  return resp;
}

}  // namespace

void ServeTrainer(const std::shared_ptr<ServeCall>& call) {
  ServerState& state = call->state();
  Request& req = call->request();
  const TrainerRef& ref = std::get<TrainerRef>(req.target);
  auto hosted = state.trainers.Get(req.tenant, ref.id);
  if (!hosted.ok()) return call->Finish(hosted.status());
  auto x = BatchTensor(state, req, "x");
  if (!x.ok()) return call->Finish(x.status());
  auto labels = BatchTensor(state, req, "labels");
  if (!labels.ok()) return call->Finish(labels.status());
  train::Trainer& trainer = *(*hosted)->trainer;
  const auto started = std::chrono::steady_clock::now();
  absl::StatusOr<Response> resp = ref.call == TrainerRef::Call::kStep ? Step(trainer, *x, *labels, req)
                                                                      : Evaluate(trainer, *x, *labels, req);
  if (resp.ok()) resp->execution.compute = std::chrono::steady_clock::now() - started;
  call->Finish(std::move(resp));
}

}  // namespace npu::core
