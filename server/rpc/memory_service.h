// npu.v1.MemoryService: device-resident tensors. Free and List are unary
// calls on the server's call queue (unary_call.h); Upload and Download stream
// their bytes, on gRPC's synchronous threads.
#pragma once

#include "npu/v1/memory.grpc.pb.h"
#include "server/core/server_state.h"
#include "server/rpc/unary_call.h"

namespace npu::rpc {

using MemoryAsyncService =
    v1::MemoryService::WithRawMethod_Free<v1::MemoryService::WithRawMethod_List<v1::MemoryService::Service>>;

class MemoryServiceImpl final : public MemoryAsyncService {
 public:
  explicit MemoryServiceImpl(core::ServerState& state) : state_(state) {}
  void AddMethods(UnaryMethods& methods);
  grpc::Status Upload(grpc::ServerContext* ctx, grpc::ServerReader<v1::UploadChunk>* reader,
                      v1::TensorHandle* resp) override;
  grpc::Status Download(grpc::ServerContext* ctx, const v1::DownloadRequest* req,
                        grpc::ServerWriter<v1::DownloadChunk>* writer) override;

 private:
  absl::Status DoUpload(const std::string& tenant, grpc::ServerReader<v1::UploadChunk>* reader,
                        v1::TensorHandle* resp);
  absl::Status DoDownload(const std::string& tenant, const v1::DownloadRequest& req,
                          grpc::ServerWriter<v1::DownloadChunk>* writer);

  core::ServerState& state_;
};

}  // namespace npu::rpc
