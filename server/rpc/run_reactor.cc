#include "server/rpc/run_reactor.h"

#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/rpc/grpc_status.h"
#include "server/rpc/tensor_codec.h"

namespace npu::rpc {

RunReactor* RunReactor::Start(ServerState& state, grpc::CallbackServerContext* ctx, const v1::RunRequest* req,
                              v1::RunResponse* resp) {
  auto* r = new RunReactor(state, ctx, req, resp);
  if (absl::Status s = r->Submit(); !s.ok()) r->Complete(std::move(s));
  return r;
}

RunReactor::RunReactor(ServerState& state, grpc::CallbackServerContext* ctx, const v1::RunRequest* req,
                       v1::RunResponse* resp)
    : state_(state), ctx_(ctx), req_(req), resp_(resp) {
  // Counted before the drain check, so a drain that starts now waits for it or refuses it.
  state_.counters.runs_in_flight.fetch_add(1);
}

RunReactor::~RunReactor() = default;

void RunReactor::OnCancel() {
  if (std::chrono::system_clock::now() >= ctx_->deadline()) {
    cancel_->Cancel(absl::DeadlineExceededError("the run passed its deadline; its device work was stopped"));
  } else {
    cancel_->Cancel(absl::CancelledError("the client cancelled the run; its device work was stopped"));
  }
}

absl::Status RunReactor::Submit() {
  auto tenant = state_.TenantOf(*ctx_);
  if (!tenant.ok()) return tenant.status();
  tenant_ = *std::move(tenant);
  log_.set_tenant(tenant_);
  if (auto s = state_.CheckAdmitting(); !s.ok()) return s;
  state_.counters.runs_total.fetch_add(1);
  admitted_ = true;

  auto device = state_.devices.Find(req_->options().device());
  if (!device.ok()) return device.status();
  device_ = *device;
  switch (req_->graph_source_case()) {
    case v1::RunRequest::kGraphId: {
      auto entry = state_.graphs.Get(tenant_, req_->graph_id());
      if (!entry.ok()) return entry.status();
      auto plan = (*entry)->PlanFor(device_->preset(), state_.plan_limits());
      if (!plan.ok()) return plan.status();
      plan_ = *std::move(plan);
      break;
    }
    case v1::RunRequest::kGraph: {
      // The request outlives this run's plan: plan a view of it, weights uncopied.
      auto plan = graph::BuildPlan(std::shared_ptr<const v1::Graph>(std::shared_ptr<void>(), &req_->graph()),
                                   device_->preset(), state_.plan_limits());
      if (!plan.ok()) return plan.status();
      plan_ = *std::move(plan);
      break;
    }
    default:
      return absl::InvalidArgumentError("the run request names no graph (set graph_id or graph)");
  }
  auto binding = BindRun(*plan_, *req_, tenant_, *device_, state_.tensors);
  if (!binding.ok()) return binding.status();
  binding_ = *std::move(binding);

  graph::ExecOptions options{req_->options().profile(), req_->options().debug(), device_->id()};
  graph::RunPlanAsync(plan_, std::move(binding_.inputs), std::move(options), *device_, cancel_,
                      [this](absl::StatusOr<graph::ExecResult> result) { Complete(Respond(std::move(result))); });
  return absl::OkStatus();
}

absl::Status RunReactor::Respond(absl::StatusOr<graph::ExecResult> result) {
  if (!result.ok()) {
    const absl::StatusCode code = result.status().code();
    if (code == absl::StatusCode::kDeadlineExceeded || code == absl::StatusCode::kCancelled) {
      state_.counters.runs_cancelled.fetch_add(1);
    }
    return result.status();
  }
  for (size_t i = 0; i < plan_->outputs.size(); ++i) {
    v1::RunOutput* out = resp_->add_outputs();
    out->set_name(plan_->values[plan_->outputs[i]].name);
    if (binding_.keep_on_device[i]) {
      auto handle = state_.tensors.Put(tenant_, device_, result->outputs[i]);
      if (!handle.ok()) return handle.status();
      *out->mutable_handle() = *std::move(handle);
    } else {
      CopyToProto(result->outputs[i], out->mutable_tensor());
    }
  }
  for (const auto& [name, tensor] : result->intermediates) {
    v1::RunOutput* out = resp_->add_intermediates();
    out->set_name(name);
    CopyToProto(tensor, out->mutable_tensor());
  }
  if (req_->options().profile()) {
    log_.set_device_us(result->profile.device_time_us());
    *resp_->mutable_profile() = std::move(result->profile);
  }
  return absl::OkStatus();
}

void RunReactor::Complete(absl::Status status) {
  if (!status.ok()) {
    if (admitted_) state_.counters.runs_failed.fetch_add(1);
    resp_->Clear();
  }
  grpc::Status wire = ToGrpcStatus(log_.Finish(std::move(status)));
  state_.counters.runs_in_flight.fetch_sub(1);
  Finish(std::move(wire));  // gRPC may now call OnDone, which deletes this
}

}  // namespace npu::rpc
