#include "server/rpc/runtime_service.h"

#include <utility>

#include "base/deterministic_bytes.h"
#include "base/sha256.h"
#include "server/rpc/call_tenant.h"
#include "server/rpc/grpc_status.h"
#include "server/core/model_registration.h"
#include "server/core/request_log.h"

namespace npu::rpc {

grpc::Status RuntimeServiceImpl::RegisterGraph(grpc::ServerContext* ctx, const v1::RegisterGraphRequest* req,
                                               v1::RegisterGraphResponse* resp) {
  core::RequestLog log("RegisterGraph");
  auto tenant = TenantOf(state_, *ctx);
  if (!tenant.ok()) return ToGrpcStatus(log.Finish(tenant.status()));
  log.set_tenant(*tenant);
  if (auto s = state_.CheckAdmitting(); !s.ok()) return ToGrpcStatus(log.Finish(s));
  absl::StatusOr<v1::RegisterGraphResponse> registered;
  switch (req->model_case()) {
    case v1::RegisterGraphRequest::kGraph: {
      // Hashed as its deterministic serialization, which clients can compute
      // too; the graph itself is copied from the request, not parsed again.
      std::string bytes = DeterministicBytes(req->graph());
      const uint64_t size = bytes.size();
      const std::string sha = Sha256Hex(bytes);
      std::string().swap(bytes);
      registered = core::RegisterModel(state_, *tenant, size, sha, req->device(), req->content_sha256(),
                                 [&]() -> absl::StatusOr<core::LoadedModel> {
                                   // Copied: moving the request's many small
                                   // allocations into the store left more of
                                   // them fragmented once it was unregistered.
                                   return core::LoadedModel{std::make_shared<const v1::Graph>(req->graph()), {}};
                                 });
      break;
    }
    case v1::RegisterGraphRequest::kOnnxModel: {
      // The bytes are taken out of the request, not copied: gRPC allocated the
      // request for this handler alone, and a copy would hold them twice while
      // they are imported (a 45 MB ResNet-18 peaked 45 MB higher).
      std::string bytes = std::move(*const_cast<v1::RegisterGraphRequest*>(req)->mutable_onnx_model());
      registered = core::RegisterModelBytes(state_, *tenant, v1::RegisterGraphHeader::ONNX, std::move(bytes), req->device(),
                                      req->content_sha256());
      break;
    }
    default:
      return ToGrpcStatus(log.Finish(absl::InvalidArgumentError("the request carries no model (graph or onnx_model)")));
  }
  if (!registered.ok()) return ToGrpcStatus(log.Finish(registered.status()));
  *resp = *std::move(registered);
  return ToGrpcStatus(log.Finish(absl::OkStatus()));
}

absl::Status RuntimeServiceImpl::ReceiveModel(const std::string& tenant,
                                              grpc::ServerReader<v1::RegisterGraphChunk>* reader,
                                              v1::RegisterGraphResponse* resp) {
  v1::RegisterGraphChunk chunk;
  if (!reader->Read(&chunk)) return absl::InvalidArgumentError("the model stream ended before its header");
  if (!chunk.has_header()) return absl::InvalidArgumentError("the first model chunk must carry the header");
  const v1::RegisterGraphHeader header = chunk.header();
  if (header.total_bytes() > state_.limits.max_model_bytes) {
    return absl::InvalidArgumentError(absl::StrCat("the model is ", header.total_bytes(), " bytes; the limit is ",
                                                   state_.limits.max_model_bytes));
  }
  std::string bytes;
  bytes.reserve(header.total_bytes());
  bool first = true;
  do {
    if (!first && chunk.has_header()) return absl::InvalidArgumentError("only the first model chunk may carry a header");
    first = false;
    if (chunk.data().size() > header.total_bytes() - bytes.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("the model stream sent more than the header's ", header.total_bytes(), " bytes"));
    }
    bytes.append(chunk.data());
  } while (reader->Read(&chunk));
  if (bytes.size() != header.total_bytes()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the model stream sent ", bytes.size(), " of the header's ", header.total_bytes(), " bytes"));
  }
  auto registered =
      core::RegisterModelBytes(state_, tenant, header.format(), std::move(bytes), header.device(), header.content_sha256());
  if (!registered.ok()) return registered.status();
  *resp = *std::move(registered);
  return absl::OkStatus();
}

grpc::Status RuntimeServiceImpl::RegisterGraphStream(grpc::ServerContext* ctx,
                                                     grpc::ServerReader<v1::RegisterGraphChunk>* reader,
                                                     v1::RegisterGraphResponse* resp) {
  core::RequestLog log("RegisterGraphStream");
  auto tenant = TenantOf(state_, *ctx);
  if (!tenant.ok()) return ToGrpcStatus(log.Finish(tenant.status()));
  log.set_tenant(*tenant);
  if (auto s = state_.CheckAdmitting(); !s.ok()) return ToGrpcStatus(log.Finish(s));
  return ToGrpcStatus(log.Finish(ReceiveModel(*tenant, reader, resp)));
}

grpc::Status RuntimeServiceImpl::FindGraph(grpc::ServerContext* ctx, const v1::FindGraphRequest* req,
                                           v1::RegisterGraphResponse* resp) {
  core::RequestLog log("FindGraph");
  auto tenant = TenantOf(state_, *ctx);
  if (!tenant.ok()) return ToGrpcStatus(log.Finish(tenant.status()));
  log.set_tenant(*tenant);
  auto found = state_.graphs.Reregister(*tenant, req->content_sha256());
  if (!found.ok()) return ToGrpcStatus(log.Finish(found.status()));
  *resp = core::DescribeRegistration(found->first, *found->second, req->content_sha256());
  return ToGrpcStatus(log.Finish(absl::OkStatus()));
}

grpc::Status RuntimeServiceImpl::UnregisterGraph(grpc::ServerContext* ctx, const v1::UnregisterGraphRequest* req,
                                                 v1::UnregisterGraphResponse*) {
  core::RequestLog log("UnregisterGraph");
  auto tenant = TenantOf(state_, *ctx);
  if (!tenant.ok()) return ToGrpcStatus(log.Finish(tenant.status()));
  log.set_tenant(*tenant);
  return ToGrpcStatus(log.Finish(state_.graphs.Remove(*tenant, req->graph_id())));
}

}  // namespace npu::rpc
