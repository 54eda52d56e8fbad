#include "server/rpc/run_call.h"

#include <chrono>
#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/graph/passes/prepare_graph.h"
#include "server/graph/passes/shape_binding.h"
#include "server/rpc/call_tenant.h"
#include "server/rpc/grpc_status.h"
#include "server/rpc/tensor_codec.h"

namespace npu::rpc {

void RunCall::Await(AsyncCallQueue& queue, RunAsyncService& service, core::ServerState& state) {
  new RunCall(queue, service, state);
}

RunCall::RunCall(AsyncCallQueue& queue, RunAsyncService& service, core::ServerState& state)
    : queue_(queue), service_(service), state_(state) {
  queue_.Awaiting();
  ctx_.AsyncNotifyWhenDone(&done_tag_);
  service_.RequestRun(&ctx_, &request_bytes_, &writer_, queue_.cq(), queue_.cq(), &request_tag_);
}

void RunCall::OnRequest(bool ok) {
  if (!ok) {  // shutting down: no call came, and none will report done
    queue_.Refused();
    delete this;
    return;
  }
  queue_.Accepted([this] { Await(queue_, service_, state_); });  // the next call, before this one's work
  log_ = std::make_unique<core::RequestLog>("Run");
  // Counted before the drain check, so a drain that starts now waits for it or refuses it.
  state_.counters.runs_in_flight.fetch_add(1);
  absl::Status s = ParseRawRequest(request_bytes_, req_, "/npu.v1.RuntimeService/Run");
  if (s.ok()) s = Submit();
  if (!s.ok()) Complete(std::move(s));
}

void RunCall::OnDone(bool) {
  if (ctx_.IsCancelled()) {
    if (std::chrono::system_clock::now() >= ctx_.deadline()) {
      cancel_->Cancel(absl::DeadlineExceededError("the run passed its deadline; its device work was stopped"));
    } else {
      cancel_->Cancel(absl::CancelledError("the client cancelled the run; its device work was stopped"));
    }
  }
  MaybeDelete();
}

void RunCall::OnFinished(bool) { MaybeDelete(); }

void RunCall::MaybeDelete() {
  if (pending_events_.fetch_sub(1) == 1) delete this;
}

absl::Status RunCall::Submit() {
  auto tenant = TenantOf(state_, ctx_);
  if (!tenant.ok()) return tenant.status();
  tenant_ = *std::move(tenant);
  log_->set_tenant(tenant_);
  if (auto s = state_.CheckAdmitting(); !s.ok()) return s;
  state_.counters.runs_total.fetch_add(1);
  admitted_ = true;

  auto device = state_.devices.Find(req_.options().device());
  if (!device.ok()) return device.status();
  device_ = *device;
  // Debug runs return every node's output, so they run a plan without fusion.
  const graph::PlanOptions plan_options{.fuse = !req_.options().debug()};
  // A graph with dynamic dims is planned for the shapes its inputs bring, so
  // they are resolved first; a static one is planned (validated) first.
  absl::StatusOr<std::vector<graph::HostTensor>> inputs;
  switch (req_.graph_source_case()) {
    case v1::RunRequest::kGraphId: {
      auto entry = state_.graphs.Get(tenant_, req_.graph_id());
      if (!entry.ok()) return entry.status();
      inputs = ResolveInputs((*entry)->inputs(), req_, tenant_, *device_, state_.tensors);
      if (!inputs.ok()) return inputs.status();
      auto plan = (*entry)->PlanFor(device_->preset(), TypesOf(*inputs), state_.plan_limits(), plan_options);
      if (!plan.ok()) return plan.status();
      plan_ = *std::move(plan);
      break;
    }
    case v1::RunRequest::kGraph: {
      const v1::Graph& graph = req_.graph();
      // The request outlives this run's plan: its weights are read in place.
      std::shared_ptr<const v1::Graph> view(std::shared_ptr<void>(), &graph);
      if (!graph::HasDynamicInputs(graph)) {
        auto plan = graph::PreparePlan(view, nullptr, device_->preset(), state_.plan_limits(), plan_options);
        if (!plan.ok()) return plan.status();
        plan_ = *std::move(plan);
        auto binding = BindRun(*plan_, req_, tenant_, *device_, state_.tensors);
        if (!binding.ok()) return binding.status();
        binding_ = *std::move(binding);
        return Start();
      }
      inputs = ResolveInputs({graph.inputs().begin(), graph.inputs().end()}, req_, tenant_, *device_, state_.tensors);
      if (!inputs.ok()) return inputs.status();
      const std::vector<graph::TensorType> types = TypesOf(*inputs);
      auto plan = graph::PreparePlan(view, &types, device_->preset(), state_.plan_limits(), plan_options);
      if (!plan.ok()) return plan.status();
      plan_ = *std::move(plan);
      break;
    }
    default:
      return absl::InvalidArgumentError("the run request names no graph (set graph_id or graph)");
  }
  auto binding = BindInputs(*plan_, *std::move(inputs), req_);
  if (!binding.ok()) return binding.status();
  binding_ = *std::move(binding);
  return Start();
}

absl::Status RunCall::Start() {
  graph::ExecOptions options;
  options.profile = req_.options().profile();
  options.debug = req_.options().debug();
  options.device_id = device_->id();
  graph::RunPlanAsync(plan_, std::move(binding_.inputs), std::move(options), *device_, cancel_,
                      [this](absl::StatusOr<graph::ExecResult> result) { Complete(Respond(std::move(result))); });
  return absl::OkStatus();
}

absl::Status RunCall::Respond(absl::StatusOr<graph::ExecResult> result) {
  if (!result.ok()) {
    const absl::StatusCode code = result.status().code();
    if (code == absl::StatusCode::kDeadlineExceeded || code == absl::StatusCode::kCancelled) {
      state_.counters.runs_cancelled.fetch_add(1);
    }
    return result.status();
  }
  for (size_t i = 0; i < plan_->outputs.size(); ++i) {
    v1::RunOutput* out = resp_.add_outputs();
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
    v1::RunOutput* out = resp_.add_intermediates();
    out->set_name(name);
    CopyToProto(tensor, out->mutable_tensor());
  }
  if (req_.options().profile()) {
    log_->set_device_us(result->profile.device_time_us());
    *resp_.mutable_profile() = std::move(result->profile);
  }
  return absl::OkStatus();
}

void RunCall::Complete(absl::Status status) {
  if (!status.ok()) {
    if (admitted_) state_.counters.runs_failed.fetch_add(1);
    resp_.Clear();
  }
  grpc::Status wire = ToGrpcStatus(log_->Finish(std::move(status)));
  // The run is over once its status is decided: a client that reads the
  // answer and then the server's counters sees it counted out.
  state_.counters.runs_in_flight.fetch_sub(1);
  // Once the status is on its way the queue's threads may delete this call:
  // what is needed after Finish is taken first.
  AsyncCallQueue& queue = queue_;
  FinishRawCall(writer_, resp_, wire, &finish_tag_);
  queue.Closed();
}

}  // namespace npu::rpc
