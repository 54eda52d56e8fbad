#pragma once

#include "npu/v1/memory.grpc.pb.h"
#include "server/core/server_state.h"

namespace npu::rpc {

class MemoryServiceImpl final : public v1::MemoryService::Service {
 public:
  explicit MemoryServiceImpl(core::ServerState& state) : state_(state) {}
  grpc::Status Upload(grpc::ServerContext* ctx, grpc::ServerReader<v1::UploadChunk>* reader,
                      v1::TensorHandle* resp) override;
  grpc::Status Download(grpc::ServerContext* ctx, const v1::DownloadRequest* req,
                        grpc::ServerWriter<v1::DownloadChunk>* writer) override;
  grpc::Status Free(grpc::ServerContext* ctx, const v1::FreeRequest* req, v1::FreeResponse* resp) override;
  grpc::Status List(grpc::ServerContext* ctx, const v1::ListHandlesRequest* req,
                    v1::ListHandlesResponse* resp) override;

 private:
  absl::Status DoUpload(const std::string& tenant, grpc::ServerReader<v1::UploadChunk>* reader,
                        v1::TensorHandle* resp);
  absl::Status DoDownload(const std::string& tenant, const v1::DownloadRequest& req,
                          grpc::ServerWriter<v1::DownloadChunk>* writer);

  core::ServerState& state_;
};

}  // namespace npu::rpc
