#include "server/rpc/run_call.h"

#include <chrono>
#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/rpc/call_tenant.h"
#include "server/rpc/grpc_status.h"
#include "server/rpc/run_request.h"

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
  absl::Status s = ParseRawRequest(request_bytes_, req_, "/npu.v1.RuntimeService/Run");
  if (!s.ok()) return Complete(std::move(s));
  auto request = Translate();
  if (!request.ok()) return Complete(request.status());
  core::Serve(state_, *std::move(request),
              [this](absl::StatusOr<core::Response> result) { Complete(Respond(std::move(result))); });
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

absl::StatusOr<core::Request> RunCall::Translate() {
  auto tenant = TenantOf(state_, ctx_);
  if (!tenant.ok()) return tenant.status();
  log_->set_tenant(*tenant);
  auto r = TranslateRun(req_);  // req_ lives until the call is deleted
  if (!r.ok()) return r.status();
  r->tenant = *std::move(tenant);
  r->cancel = cancel_;
  return r;
}

absl::Status RunCall::Respond(absl::StatusOr<core::Response> result) {
  if (!result.ok()) return result.status();
  if (result->profile != nullptr) log_->set_device_us(result->profile->device_time_us());
  EncodeRunResponse(*std::move(result), &resp_);
  return absl::OkStatus();
}

void RunCall::Complete(absl::Status status) {
  if (!status.ok()) resp_.Clear();
  grpc::Status wire = ToGrpcStatus(log_->Finish(std::move(status)));
  // Once the status is on its way the queue's threads may delete this call:
  // what is needed after Finish is taken first.
  AsyncCallQueue& queue = queue_;
  FinishRawCall(writer_, resp_, wire, &finish_tag_);
  queue.Closed();
}

}  // namespace npu::rpc
