#include "server/rpc/kserve_service.h"

#include <utility>

#include "server/rpc/kserve_grpc_codec.h"
#include "server/rpc/kserve_infer.h"
#include "server/rpc/kserve_metadata.h"
#include "server/rpc/kserve_server_info.h"

namespace npu::rpc {

void KserveServiceImpl::ModelInfer(UnaryCall<inference::ModelInferRequest, inference::ModelInferResponse>& call) {
  auto request = DecodeInferRequest(call.request());  // raw inputs view the call's request
  if (!request.ok()) return call.Finish(request.status());
  StartInfer(state_, call.tenant(), *std::move(request), call.cancel(),
             [&call](absl::StatusOr<InferResult> result) {
               if (!result.ok()) return call.Finish(result.status());
               if (auto it = result->parameters.find("npu_device_time_ns"); it != result->parameters.end()) {
                 call.log().set_device_us(static_cast<double>(it->second.int64_param()) / 1000.0);
               }
               // Answered in the form it was asked: raw bytes for raw inputs (and for a
               // request without inputs), typed contents for typed ones.
               const bool raw = call.request().raw_input_contents_size() > 0 || call.request().inputs_size() == 0;
               EncodeInferResponse(*std::move(result), raw, &call.response());
               call.Finish(absl::OkStatus());
             });
}

void KserveServiceImpl::AddMethods(UnaryMethods& methods) {
  using namespace inference;  // the protocol's message names, as its proto spells them
  const MethodInfo probe{"inference.ServerLive", "/inference.GRPCInferenceService/ServerLive", CallWork::kInline,
                         true};
  methods.Add<ServerLiveRequest, ServerLiveResponse>(*this, &KserveServiceImpl::RequestServerLive, probe,
                                                     [](auto& call) {
                                                       call.response().set_live(true);  // answering is being live
                                                       call.Finish(absl::OkStatus());
                                                     });
  methods.Add<ServerReadyRequest, ServerReadyResponse>(
      *this, &KserveServiceImpl::RequestServerReady,
      {"inference.ServerReady", "/inference.GRPCInferenceService/ServerReady", CallWork::kInline, true},
      [this](auto& call) {
        call.response().set_ready(KserveServerReadiness(state_).ok());
        call.Finish(absl::OkStatus());
      });
  methods.Add<ModelReadyRequest, ModelReadyResponse>(
      *this, &KserveServiceImpl::RequestModelReady,
      {"inference.ModelReady", "/inference.GRPCInferenceService/ModelReady"}, [this](auto& call) {
        const absl::Status found =
            state_.models.Find(call.tenant(), call.request().name(), call.request().version()).status();
        call.response().set_ready(found.ok());
        call.Finish(core::IsAbsentModel(found) ? absl::OkStatus() : found);
      });
  methods.Add<ServerMetadataRequest, ServerMetadataResponse>(
      *this, &KserveServiceImpl::RequestServerMetadata,
      {"inference.ServerMetadata", "/inference.GRPCInferenceService/ServerMetadata"}, [](auto& call) {
        call.response() = KserveServerMetadata();
        call.Finish(absl::OkStatus());
      });
  methods.Add<ModelMetadataRequest, ModelMetadataResponse>(
      *this, &KserveServiceImpl::RequestModelMetadata,
      {"inference.ModelMetadata", "/inference.GRPCInferenceService/ModelMetadata"}, [this](auto& call) {
        auto metadata = state_.models.Metadata(call.tenant(), call.request().name(), call.request().version());
        if (metadata.ok()) call.response() = KserveModelMetadata(*metadata);
        call.Finish(metadata.status());
      });
  methods.Add<ModelInferRequest, ModelInferResponse>(
      *this, &KserveServiceImpl::RequestModelInfer,
      {"inference.ModelInfer", "/inference.GRPCInferenceService/ModelInfer", CallWork::kInline, false, 4},
      [this](auto& call) { ModelInfer(call); });
  methods.Add<ModelConfigRequest, ModelConfigResponse>(
      *this, &KserveServiceImpl::RequestModelConfig,
      {"inference.ModelConfig", "/inference.GRPCInferenceService/ModelConfig"}, [this](auto& call) {
        auto config = state_.models.Config(call.tenant(), call.request().name(), call.request().version());
        if (config.ok()) *call.response().mutable_config() = *std::move(config);
        call.Finish(config.status());
      });
  methods.Add<RepositoryIndexRequest, RepositoryIndexResponse>(
      *this, &KserveServiceImpl::RequestRepositoryIndex,
      {"inference.RepositoryIndex", "/inference.GRPCInferenceService/RepositoryIndex"}, [this](auto& call) {
        call.response() = KserveIndex(state_.models.Index(call.tenant(), call.request().ready()));
        call.Finish(absl::OkStatus());
      });
  methods.Add<RepositoryModelLoadRequest, RepositoryModelLoadResponse>(
      *this, &KserveServiceImpl::RequestRepositoryModelLoad,
      {"inference.RepositoryModelLoad", "/inference.GRPCInferenceService/RepositoryModelLoad", CallWork::kPool},
      [this](auto& call) {
        if (auto s = state_.CheckAdmitting(); !s.ok()) return call.Finish(s);
        std::vector<std::string> parameters;
        for (const auto& [key, value] : call.request().parameters()) parameters.push_back(key);
        call.Finish(state_.models.Load(call.tenant(), call.request().model_name(), parameters));
      });
  methods.Add<RepositoryModelUnloadRequest, RepositoryModelUnloadResponse>(
      *this, &KserveServiceImpl::RequestRepositoryModelUnload,
      {"inference.RepositoryModelUnload", "/inference.GRPCInferenceService/RepositoryModelUnload", CallWork::kPool},
      [this](auto& call) { call.Finish(state_.models.Unload(call.tenant(), call.request().model_name())); });
}

}  // namespace npu::rpc
