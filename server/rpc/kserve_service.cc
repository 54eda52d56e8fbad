#include "server/rpc/kserve_service.h"

#include "server/rpc/call_tenant.h"
#include "server/rpc/grpc_status.h"
#include "server/rpc/kserve_metadata.h"
#include "server/rpc/kserve_server_info.h"
#include "server/core/request_log.h"

namespace npu::rpc {
namespace {

// Runs `body` for the caller's tenant, logging the call.
template <typename Body>
grpc::Status ForTenant(const core::ServerState& state, const grpc::ServerContext& ctx, const char* method, Body body) {
  core::RequestLog log(method);
  auto tenant = TenantOf(state, ctx);
  if (!tenant.ok()) return ToGrpcStatus(log.Finish(tenant.status()));
  log.set_tenant(*tenant);
  return ToGrpcStatus(log.Finish(body(*tenant)));
}

}  // namespace

grpc::Status KserveServiceImpl::ServerLive(grpc::ServerContext*, const inference::ServerLiveRequest*,
                                           inference::ServerLiveResponse* resp) {
  resp->set_live(true);  // answering at all is being live
  return grpc::Status::OK;
}

grpc::Status KserveServiceImpl::ServerReady(grpc::ServerContext*, const inference::ServerReadyRequest*,
                                            inference::ServerReadyResponse* resp) {
  resp->set_ready(KserveServerReadiness(state_).ok());
  return grpc::Status::OK;
}

grpc::Status KserveServiceImpl::ModelReady(grpc::ServerContext* ctx, const inference::ModelReadyRequest* req,
                                           inference::ModelReadyResponse* resp) {
  return ForTenant(state_, *ctx, "inference.ModelReady", [&](const std::string& tenant) {
    const absl::Status found = state_.models.Find(tenant, req->name(), req->version()).status();
    resp->set_ready(found.ok());
    return core::IsAbsentModel(found) ? absl::OkStatus() : found;
  });
}

grpc::Status KserveServiceImpl::ServerMetadata(grpc::ServerContext* ctx, const inference::ServerMetadataRequest*,
                                               inference::ServerMetadataResponse* resp) {
  return ForTenant(state_, *ctx, "inference.ServerMetadata", [&](const std::string&) {
    *resp = KserveServerMetadata();
    return absl::OkStatus();
  });
}

grpc::Status KserveServiceImpl::ModelMetadata(grpc::ServerContext* ctx, const inference::ModelMetadataRequest* req,
                                              inference::ModelMetadataResponse* resp) {
  return ForTenant(state_, *ctx, "inference.ModelMetadata", [&](const std::string& tenant) {
    auto metadata = state_.models.Metadata(tenant, req->name(), req->version());
    if (!metadata.ok()) return metadata.status();
    *resp = KserveModelMetadata(*metadata);
    return absl::OkStatus();
  });
}

grpc::Status KserveServiceImpl::RepositoryIndex(grpc::ServerContext* ctx, const inference::RepositoryIndexRequest* req,
                                                inference::RepositoryIndexResponse* resp) {
  return ForTenant(state_, *ctx, "inference.RepositoryIndex", [&](const std::string& tenant) {
    *resp = KserveIndex(state_.models.Index(tenant, req->ready()));
    return absl::OkStatus();
  });
}

grpc::Status KserveServiceImpl::RepositoryModelLoad(grpc::ServerContext* ctx,
                                                    const inference::RepositoryModelLoadRequest* req,
                                                    inference::RepositoryModelLoadResponse*) {
  return ForTenant(state_, *ctx, "inference.RepositoryModelLoad", [&](const std::string& tenant) {
    if (auto s = state_.CheckAdmitting(); !s.ok()) return s;
    std::vector<std::string> parameters;
    for (const auto& [key, value] : req->parameters()) parameters.push_back(key);
    return state_.models.Load(tenant, req->model_name(), parameters);
  });
}

grpc::Status KserveServiceImpl::RepositoryModelUnload(grpc::ServerContext* ctx,
                                                      const inference::RepositoryModelUnloadRequest* req,
                                                      inference::RepositoryModelUnloadResponse*) {
  return ForTenant(state_, *ctx, "inference.RepositoryModelUnload",
                   [&](const std::string& tenant) { return state_.models.Unload(tenant, req->model_name()); });
}

}  // namespace npu::rpc
