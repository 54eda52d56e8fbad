#include "server/rpc/kserve_infer_call.h"

#include <chrono>
#include <utility>

#include "server/rpc/call_tenant.h"
#include "server/rpc/grpc_status.h"
#include "server/rpc/kserve_grpc_codec.h"

namespace npu::rpc {

void KserveInferCall::Await(AsyncCallQueue& queue, KserveAsyncService& service, core::ServerState& state) {
  new KserveInferCall(queue, service, state);
}

KserveInferCall::KserveInferCall(AsyncCallQueue& queue, KserveAsyncService& service, core::ServerState& state)
    : queue_(queue), service_(service), state_(state) {
  queue_.Awaiting();
  ctx_.AsyncNotifyWhenDone(&done_tag_);
  service_.RequestModelInfer(&ctx_, &request_bytes_, &writer_, queue_.cq(), queue_.cq(), &request_tag_);
}

void KserveInferCall::OnRequest(bool ok) {
  if (!ok) {  // shutting down: no call came, and none will report done
    queue_.Refused();
    delete this;
    return;
  }
  queue_.Accepted([this] { Await(queue_, service_, state_); });  // the next call first
  if (auto s = ParseRawRequest(request_bytes_, req_, "/inference.GRPCInferenceService/ModelInfer"); !s.ok()) {
    Complete(std::move(s));
    return;
  }
  auto tenant = TenantOf(state_, ctx_);
  if (!tenant.ok()) {
    Complete(tenant.status());
    return;
  }
  log_.set_tenant(*tenant);
  auto request = DecodeInferRequest(req_);
  if (!request.ok()) {
    Complete(request.status());
    return;
  }
  StartInfer(state_, *tenant, *std::move(request), cancel_,
             [this](absl::StatusOr<InferResult> result) { Complete(std::move(result)); });
}

void KserveInferCall::OnDone(bool) {
  if (ctx_.IsCancelled()) {
    if (std::chrono::system_clock::now() >= ctx_.deadline()) {
      cancel_->Cancel(absl::DeadlineExceededError("the inference passed its deadline; its device work was stopped"));
    } else {
      cancel_->Cancel(absl::CancelledError("the client cancelled the inference; its device work was stopped"));
    }
  }
  MaybeDelete();
}

void KserveInferCall::OnFinished(bool) { MaybeDelete(); }

void KserveInferCall::MaybeDelete() {
  if (pending_events_.fetch_sub(1) == 1) delete this;
}

void KserveInferCall::Complete(absl::StatusOr<InferResult> result) {
  absl::Status status = result.status();
  inference::ModelInferResponse resp;
  if (result.ok()) {
    if (auto it = result->parameters.find("npu_device_time_ns"); it != result->parameters.end()) {
      log_.set_device_us(static_cast<double>(it->second.int64_param()) / 1000.0);
    }
    // Answered in the form it was asked: raw bytes for raw inputs (and for a
    // request without inputs), typed contents for typed ones.
    const bool raw = req_.raw_input_contents_size() > 0 || req_.inputs_size() == 0;
    EncodeInferResponse(*std::move(result), raw, &resp);
  }
  const grpc::Status wire = ToGrpcStatus(log_.Finish(std::move(status)));
  // Once the status is on its way the queue's threads may delete this call.
  AsyncCallQueue& queue = queue_;
  FinishRawCall(writer_, resp, wire, &finish_tag_);
  queue.Closed();
}

}  // namespace npu::rpc
