#include "server/rpc/kserve_infer_reactor.h"

#include <chrono>
#include <utility>

#include "server/rpc/grpc_status.h"
#include "server/rpc/kserve_grpc_codec.h"

namespace npu::rpc {

KserveInferReactor* KserveInferReactor::Start(ServerState& state, const KserveModels& models,
                                              grpc::CallbackServerContext* ctx, const inference::ModelInferRequest* req,
                                              inference::ModelInferResponse* resp) {
  auto* r = new KserveInferReactor(ctx, req, resp);
  auto tenant = state.TenantOf(*ctx);
  if (!tenant.ok()) {
    r->Complete(tenant.status());
    return r;
  }
  r->log_.set_tenant(*tenant);
  auto request = DecodeInferRequest(*req);
  if (!request.ok()) {
    r->Complete(request.status());
    return r;
  }
  StartInfer(state, models, *tenant, *std::move(request), r->cancel_,
             [r](absl::StatusOr<InferResult> result) { r->Complete(std::move(result)); });
  return r;
}

void KserveInferReactor::OnCancel() {
  if (std::chrono::system_clock::now() >= ctx_->deadline()) {
    cancel_->Cancel(absl::DeadlineExceededError("the inference passed its deadline; its device work was stopped"));
  } else {
    cancel_->Cancel(absl::CancelledError("the client cancelled the inference; its device work was stopped"));
  }
}

void KserveInferReactor::Complete(absl::StatusOr<InferResult> result) {
  absl::Status status = result.status();
  if (result.ok()) {
    if (auto it = result->parameters.find("npu_device_time_ns"); it != result->parameters.end()) {
      log_.set_device_us(static_cast<double>(it->second.int64_param()) / 1000.0);
    }
    // Answered in the form it was asked: raw bytes for raw inputs (and for a
    // request without inputs), typed contents for typed ones.
    const bool raw = req_->raw_input_contents_size() > 0 || req_->inputs_size() == 0;
    EncodeInferResponse(*std::move(result), raw, resp_);
  }
  Finish(ToGrpcStatus(log_.Finish(std::move(status))));  // gRPC may now call OnDone, which deletes this
}

}  // namespace npu::rpc
