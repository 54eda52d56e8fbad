// inference.GRPCInferenceService: the KServe v2 / Open Inference Protocol over
// gRPC, on the same server and port as npu.v1. ModelInfer runs on gRPC's
// asynchronous API (kserve_infer_call.h, on the server's AsyncCallQueue); the
// rest answer inline. Every call
// but ServerLive and ServerReady (probes) needs the bearer token when
// --auth_tokens is on, and sees only the caller's models (core/model_registry.h).
#pragma once

#include "kserve/grpc_service.grpc.pb.h"
#include "server/rpc/kserve_infer_call.h"
#include "server/core/server_state.h"

namespace npu::rpc {

class KserveServiceImpl final : public KserveAsyncService {
 public:
  explicit KserveServiceImpl(core::ServerState& state) : state_(state) {}

  grpc::Status ServerLive(grpc::ServerContext* ctx, const inference::ServerLiveRequest* req,
                          inference::ServerLiveResponse* resp) override;
  grpc::Status ServerReady(grpc::ServerContext* ctx, const inference::ServerReadyRequest* req,
                           inference::ServerReadyResponse* resp) override;
  grpc::Status ModelReady(grpc::ServerContext* ctx, const inference::ModelReadyRequest* req,
                          inference::ModelReadyResponse* resp) override;
  grpc::Status ServerMetadata(grpc::ServerContext* ctx, const inference::ServerMetadataRequest* req,
                              inference::ServerMetadataResponse* resp) override;
  grpc::Status ModelMetadata(grpc::ServerContext* ctx, const inference::ModelMetadataRequest* req,
                             inference::ModelMetadataResponse* resp) override;
  grpc::Status RepositoryIndex(grpc::ServerContext* ctx, const inference::RepositoryIndexRequest* req,
                               inference::RepositoryIndexResponse* resp) override;
  grpc::Status RepositoryModelLoad(grpc::ServerContext* ctx, const inference::RepositoryModelLoadRequest* req,
                                   inference::RepositoryModelLoadResponse* resp) override;
  grpc::Status RepositoryModelUnload(grpc::ServerContext* ctx, const inference::RepositoryModelUnloadRequest* req,
                                     inference::RepositoryModelUnloadResponse* resp) override;

 private:
  core::ServerState& state_;
};

}  // namespace npu::rpc
