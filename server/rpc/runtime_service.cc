#include "server/rpc/runtime_service.h"

#include <utility>

#include "base/deterministic_bytes.h"
#include "base/sha256.h"
#include "server/rpc/call_tenant.h"
#include "server/core/serve.h"
#include "server/rpc/grpc_status.h"
#include "server/rpc/run_request.h"
#include "server/core/gradient_registration.h"
#include "server/core/model_registration.h"
#include "server/core/request_log.h"

namespace npu::rpc {

absl::Status RuntimeServiceImpl::RegisterGraph(const std::string& tenant, v1::RegisterGraphRequest& req,
                                               v1::RegisterGraphResponse* resp) {
  if (auto s = state_.CheckAdmitting(); !s.ok()) return s;
  absl::StatusOr<v1::RegisterGraphResponse> registered;
  switch (req.model_case()) {
    case v1::RegisterGraphRequest::kGraph: {
      // Hashed as its deterministic serialization, which clients can compute
      // too (hashed as written, never held whole); the graph itself is copied
      // from the request, not parsed again.
      const uint64_t size = req.graph().ByteSizeLong();
      const std::string sha = DeterministicSha256Hex(req.graph());
      registered = core::RegisterModel(state_, tenant, size, sha, req.device(), req.content_sha256(),
                                       [&]() -> absl::StatusOr<core::LoadedModel> {
                                         // Copied: moving the request's many small
                                         // allocations into the store left more of
                                         // them fragmented once it was unregistered.
                                         return core::LoadedModel{std::make_shared<const v1::Graph>(req.graph()), {}};
                                       });
      break;
    }
    case v1::RegisterGraphRequest::kOnnxModel: {
      // The bytes are taken out of the call's request, not copied: a copy would
      // hold them twice while they are imported (a 45 MB ResNet-18 peaked 45 MB higher).
      std::string bytes = std::move(*req.mutable_onnx_model());
      registered = core::RegisterModelBytes(state_, tenant, v1::RegisterGraphHeader::ONNX, std::move(bytes),
                                            req.device(), req.content_sha256());
      break;
    }
    default: return absl::InvalidArgumentError("the request carries no model (graph or onnx_model)");
  }
  if (!registered.ok()) return registered.status();
  *resp = *std::move(registered);
  return absl::OkStatus();
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
  auto registered = core::RegisterModelBytes(state_, tenant, header.format(), std::move(bytes), header.device(),
                                             header.content_sha256());
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

void RuntimeServiceImpl::Run(UnaryCall<v1::RunRequest, v1::RunResponse>& call) {
  auto request = TranslateRun(call.request());  // the call's request lives until it finishes
  if (!request.ok()) return call.Finish(request.status());
  request->tenant = call.tenant();
  request->cancel = call.cancel();
  core::Serve(state_, *std::move(request), [&call](absl::StatusOr<core::Response> result) {
    if (!result.ok()) return call.Finish(result.status());
    if (result->profile != nullptr) call.log().set_device_us(result->profile->device_time_us());
    EncodeRunResponse(*std::move(result), &call.response());
    call.Finish(absl::OkStatus());
  });
}

void RuntimeServiceImpl::AddMethods(UnaryMethods& methods) {
  methods.Add<v1::RunRequest, v1::RunResponse>(*this, &RuntimeServiceImpl::RequestRun,
                                               {"Run", "/npu.v1.RuntimeService/Run", CallWork::kInline, false, 4},
                                               [this](auto& call) { Run(call); });
  methods.Add<v1::RegisterGraphRequest, v1::RegisterGraphResponse>(
      *this, &RuntimeServiceImpl::RequestRegisterGraph,
      // On the queue's thread, as gRPC's own thread did before: on a work-pool
      // thread, whose malloc arena nothing else uses, the freed graph stayed at
      // the arena's top, which malloc_trim does not return (tests/e2e/memory_return_test.cc).
      {"RegisterGraph", "/npu.v1.RuntimeService/RegisterGraph"}, [this](auto& call) {
        call.Finish(RegisterGraph(call.tenant(), call.mutable_request(), &call.response()));
      });
  methods.Add<v1::FindGraphRequest, v1::RegisterGraphResponse>(
      *this, &RuntimeServiceImpl::RequestFindGraph, {"FindGraph", "/npu.v1.RuntimeService/FindGraph"},
      [this](auto& call) {
        auto found = state_.graphs.Reregister(call.tenant(), call.request().content_sha256());
        if (found.ok()) {
          call.response() = core::DescribeRegistration(found->first, *found->second, call.request().content_sha256());
        }
        call.Finish(found.status());
      });
  methods.Add<v1::RegisterGradientRequest, v1::RegisterGradientResponse>(
      *this, &RuntimeServiceImpl::RequestRegisterGradient,
      {"RegisterGradient", "/npu.v1.RuntimeService/RegisterGradient", CallWork::kPool}, [this](auto& call) {
        if (auto s = state_.CheckAdmitting(); !s.ok()) return call.Finish(s);
        auto registered = core::RegisterGradient(state_, call.tenant(), call.mutable_request());
        if (registered.ok()) call.response() = *std::move(registered);
        call.Finish(registered.status());
      });
  methods.Add<v1::UnregisterGraphRequest, v1::UnregisterGraphResponse>(
      *this, &RuntimeServiceImpl::RequestUnregisterGraph,
      {"UnregisterGraph", "/npu.v1.RuntimeService/UnregisterGraph"},
      [this](auto& call) { call.Finish(state_.graphs.Remove(call.tenant(), call.request().graph_id())); });
}

}  // namespace npu::rpc
