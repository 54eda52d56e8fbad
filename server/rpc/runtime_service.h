// npu.v1.RuntimeService: registering graphs (validated and planned once) and
// running them. Run uses gRPC's callback API: the handler converts the request,
// calls the core's one entry point for a run (graph/runner.h) and returns; the
// device answers when the run ends, and a client that cancels or passes its
// deadline fires the run's CancelToken from OnCancel (nothing polls).
// RegisterGraph and UnregisterGraph stay synchronous: they do their work inline.
#pragma once

#include "npu/v1/runtime.grpc.pb.h"
#include "server/rpc/server_state.h"

namespace npu::rpc {

class RuntimeServiceImpl final : public v1::RuntimeService::WithCallbackMethod_Run<v1::RuntimeService::Service> {
 public:
  explicit RuntimeServiceImpl(ServerState& state) : state_(state) {}
  grpc::Status RegisterGraph(grpc::ServerContext* ctx, const v1::RegisterGraphRequest* req,
                             v1::RegisterGraphResponse* resp) override;
  grpc::ServerUnaryReactor* Run(grpc::CallbackServerContext* ctx, const v1::RunRequest* req,
                                v1::RunResponse* resp) override;
  grpc::Status UnregisterGraph(grpc::ServerContext* ctx, const v1::UnregisterGraphRequest* req,
                               v1::UnregisterGraphResponse* resp) override;

 private:
  ServerState& state_;
};

}  // namespace npu::rpc
