// npu.v1.RuntimeService: registering graphs (validated and planned once) and
// running them. The unary calls are served on the server's call queue
// (unary_call.h): Run translates its request (run_request.h), calls the core's
// one entry (core::Serve) and returns; the device answers when the run ends,
// and a client that cancels or passes its deadline fires the run's
// CancelToken at once (nothing polls). RegisterGraph imports and plans on the
// queue's thread (see AddMethods); RegisterGradient builds and plans a
// model's gradient graphs (core/gradient_registration.h) on the core's work
// pool; RegisterGraphStream streams its chunks on gRPC's synchronous threads.
#pragma once

#include "npu/v1/runtime.grpc.pb.h"
#include "server/core/server_state.h"
#include "server/rpc/unary_call.h"

namespace npu::rpc {

using RuntimeAsyncService = v1::RuntimeService::WithRawMethod_Run<v1::RuntimeService::WithRawMethod_RegisterGraph<
    v1::RuntimeService::WithRawMethod_FindGraph<v1::RuntimeService::WithRawMethod_UnregisterGraph<
        v1::RuntimeService::WithRawMethod_RegisterGradient<v1::RuntimeService::Service>>>>>;

class RuntimeServiceImpl final : public RuntimeAsyncService {
 public:
  explicit RuntimeServiceImpl(core::ServerState& state) : state_(state) {}
  void AddMethods(UnaryMethods& methods);
  grpc::Status RegisterGraphStream(grpc::ServerContext* ctx, grpc::ServerReader<v1::RegisterGraphChunk>* reader,
                                   v1::RegisterGraphResponse* resp) override;

 private:
  absl::Status RegisterGraph(const std::string& tenant, v1::RegisterGraphRequest& req, v1::RegisterGraphResponse* resp);
  absl::Status ReceiveModel(const std::string& tenant, grpc::ServerReader<v1::RegisterGraphChunk>* reader,
                            v1::RegisterGraphResponse* resp);
  void Run(UnaryCall<v1::RunRequest, v1::RunResponse>& call);

  core::ServerState& state_;
};

}  // namespace npu::rpc
