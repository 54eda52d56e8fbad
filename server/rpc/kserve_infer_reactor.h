// One KServe v2 gRPC ModelInfer call in flight, on gRPC's callback API: it
// decodes the request, starts the run (StartInfer) and returns; the run's end
// encodes the response and finishes the call. A client that cancels or passes
// its deadline fires the run's CancelToken from OnCancel. Deletes itself when
// gRPC is done with the call (OnDone).
#pragma once

#include <memory>

#include <grpcpp/support/server_callback.h>

#include "kserve/grpc_service.pb.h"
#include "server/device/cancel_token.h"
#include "server/rpc/kserve_infer.h"
#include "server/rpc/kserve_models.h"
#include "server/rpc/request_log.h"
#include "server/rpc/server_state.h"

namespace npu::rpc {

class KserveInferReactor final : public grpc::ServerUnaryReactor {
 public:
  static KserveInferReactor* Start(ServerState& state, const KserveModels& models, grpc::CallbackServerContext* ctx,
                                   const inference::ModelInferRequest* req, inference::ModelInferResponse* resp);

  void OnCancel() override;
  void OnDone() override { delete this; }

 private:
  KserveInferReactor(grpc::CallbackServerContext* ctx, const inference::ModelInferRequest* req,
                     inference::ModelInferResponse* resp)
      : ctx_(ctx), req_(req), resp_(resp) {}
  ~KserveInferReactor() override = default;
  // Logs and finishes the call: the last thing done with `this`.
  void Complete(absl::StatusOr<InferResult> result);

  grpc::CallbackServerContext* const ctx_;
  const inference::ModelInferRequest* const req_;
  inference::ModelInferResponse* const resp_;
  RequestLog log_{"inference.ModelInfer"};
  const std::shared_ptr<device::CancelToken> cancel_ = std::make_shared<device::CancelToken>();
};

}  // namespace npu::rpc
