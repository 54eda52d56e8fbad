#pragma once

#include "npu/v1/runtime.grpc.pb.h"
#include "server/rpc/server_state.h"

namespace npu::rpc {

class RuntimeServiceImpl final : public v1::RuntimeService::Service {
 public:
  explicit RuntimeServiceImpl(ServerState& state) : state_(state) {}
  grpc::Status RegisterGraph(grpc::ServerContext* ctx, const v1::RegisterGraphRequest* req,
                             v1::RegisterGraphResponse* resp) override;
  grpc::Status Run(grpc::ServerContext* ctx, const v1::RunRequest* req, v1::RunResponse* resp) override;
  grpc::Status UnregisterGraph(grpc::ServerContext* ctx, const v1::UnregisterGraphRequest* req,
                               v1::UnregisterGraphResponse* resp) override;

 private:
  absl::Status DoRun(const std::string& tenant, const v1::RunRequest& req, const grpc::ServerContext& ctx,
                     v1::RunResponse* resp, double* device_us);

  ServerState& state_;
};

}  // namespace npu::rpc
