// npu.v1.RuntimeService: registering graphs (validated and planned once) and
// running them. Run is served on gRPC's asynchronous API (async_call_queue.h,
// run_call.h): a call converts the request, calls the core's one entry point
// for a run (graph/runner.h) and returns to its queue; the device answers when
// the run ends, and a client that cancels or passes its deadline fires the
// run's CancelToken at once (nothing polls). RegisterGraph and UnregisterGraph
// are synchronous: they do their work inline.
#pragma once

#include "npu/v1/runtime.grpc.pb.h"
#include "server/rpc/run_call.h"
#include "server/core/server_state.h"

namespace npu::rpc {

class RuntimeServiceImpl final : public RunAsyncService {
 public:
  explicit RuntimeServiceImpl(core::ServerState& state) : state_(state) {}
  grpc::Status RegisterGraph(grpc::ServerContext* ctx, const v1::RegisterGraphRequest* req,
                             v1::RegisterGraphResponse* resp) override;
  grpc::Status RegisterGraphStream(grpc::ServerContext* ctx, grpc::ServerReader<v1::RegisterGraphChunk>* reader,
                                   v1::RegisterGraphResponse* resp) override;
  grpc::Status FindGraph(grpc::ServerContext* ctx, const v1::FindGraphRequest* req,
                         v1::RegisterGraphResponse* resp) override;
  grpc::Status UnregisterGraph(grpc::ServerContext* ctx, const v1::UnregisterGraphRequest* req,
                               v1::UnregisterGraphResponse* resp) override;

 private:
  absl::Status ReceiveModel(const std::string& tenant, grpc::ServerReader<v1::RegisterGraphChunk>* reader,
                            v1::RegisterGraphResponse* resp);
  core::ServerState& state_;
};

}  // namespace npu::rpc
