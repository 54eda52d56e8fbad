// inference.GRPCInferenceService: the KServe v2 / Open Inference Protocol over
// gRPC, on the same server and port as npu.v1. Every call is a unary call on
// the server's call queue (unary_call.h): ModelInfer decodes its request,
// hands it to the core (kserve_infer.h) and returns; the run's end encodes
// the response. Model loads and unloads run on the core's work pool. Every
// call but ServerLive and ServerReady (probes) needs the bearer token when
// --auth_tokens is on, and sees only the caller's models (core/model_registry.h).
#pragma once

#include "kserve/grpc_service.grpc.pb.h"
#include "server/core/server_state.h"
#include "server/rpc/unary_call.h"

namespace npu::rpc {

using GrpcInference = inference::GRPCInferenceService;
using KserveAsyncService = GrpcInference::WithRawMethod_ServerLive<GrpcInference::WithRawMethod_ServerReady<
    GrpcInference::WithRawMethod_ModelReady<GrpcInference::WithRawMethod_ServerMetadata<
        GrpcInference::WithRawMethod_ModelMetadata<GrpcInference::WithRawMethod_ModelInfer<
            GrpcInference::WithRawMethod_ModelConfig<GrpcInference::WithRawMethod_RepositoryIndex<
                GrpcInference::WithRawMethod_RepositoryModelLoad<
                    GrpcInference::WithRawMethod_RepositoryModelUnload<GrpcInference::Service>>>>>>>>>>;

class KserveServiceImpl final : public KserveAsyncService {
 public:
  explicit KserveServiceImpl(core::ServerState& state) : state_(state) {}
  void AddMethods(UnaryMethods& methods);

 private:
  void ModelInfer(UnaryCall<inference::ModelInferRequest, inference::ModelInferResponse>& call);

  core::ServerState& state_;
};

}  // namespace npu::rpc
