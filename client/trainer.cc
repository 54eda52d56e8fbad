#include "client/trainer.h"

#include <grpcpp/client_context.h>

#include "base/sha256.h"
#include "client/model_file.h"

namespace npu::client {

template <typename Response, typename Request, typename Method>
absl::StatusOr<Response> Trainer::Call(Client& client, Method method, const Request& request) {
  grpc::ClientContext context;
  client.PrepareContext(context);
  Response response;
  grpc::Status status = (client.training_.get()->*method)(&context, request, &response);
  if (!status.ok()) return client.Failed(status);
  return response;
}

absl::StatusOr<std::unique_ptr<Trainer>> Trainer::Create(Client& client, const npu::v1::CreateTrainerRequest& request) {
  const size_t limit = static_cast<size_t>(client.options_.max_send_message_bytes);
  if (request.ByteSizeLong() + Client::kMessageOverheadBytes <= limit ||
      request.model_case() == npu::v1::CreateTrainerRequest::kGraphId) {
    auto info = Call<npu::v1::CreateTrainerResponse>(client, &npu::v1::TrainingService::Stub::CreateTrainer, request);
    if (!info.ok()) return info.status();
    return std::unique_ptr<Trainer>(new Trainer(client, *std::move(info)));
  }
  // Too large for one message: the model goes by RegisterGraphStream and the
  // trainer names it by id (this tenant's own registration is used as it is;
  // one made here is dropped once the trainer exists).
  ModelFile model;
  if (request.model_case() == npu::v1::CreateTrainerRequest::kOnnxModel) {
    model.format = npu::v1::RegisterGraphHeader::ONNX;
    model.bytes = request.onnx_model();
    model.sha256 = Sha256Hex(model.bytes);
  } else {
    model = ModelOf(request.graph());
  }
  auto found = client.FindGraph(model.sha256);
  if (!found.ok() && found.status().code() != absl::StatusCode::kNotFound) return found.status();
  const bool registered_here = !found.ok();
  auto registered = registered_here ? client.RegisterModel(model) : found;
  if (!registered.ok()) return registered.status();
  npu::v1::CreateTrainerRequest by_id = request;
  by_id.set_graph_id(registered->graph_id());
  auto info = Call<npu::v1::CreateTrainerResponse>(client, &npu::v1::TrainingService::Stub::CreateTrainer, by_id);
  if (registered_here) client.UnregisterGraph(registered->graph_id()).IgnoreError();
  if (!info.ok()) return info.status();
  return std::unique_ptr<Trainer>(new Trainer(client, *std::move(info)));
}

Trainer::~Trainer() {
  npu::v1::DeleteTrainerRequest request;
  request.set_trainer_id(info_.trainer_id());
  // Best effort: a trainer whose server went away went with it.
  (void)Call<npu::v1::DeleteTrainerResponse>(client_, &npu::v1::TrainingService::Stub::DeleteTrainer, request);
}

absl::StatusOr<npu::v1::StepResponse> Trainer::Step(const npu::v1::Tensor& x, const npu::v1::Tensor& labels,
                                                    bool profile) {
  npu::v1::StepRequest request;
  request.set_trainer_id(info_.trainer_id());
  *request.mutable_x()->mutable_tensor() = x;
  *request.mutable_labels()->mutable_tensor() = labels;
  request.set_profile(profile);
  return Call<npu::v1::StepResponse>(client_, &npu::v1::TrainingService::Stub::Step, request);
}

absl::StatusOr<npu::v1::EvaluateResponse> Trainer::Evaluate(const npu::v1::Tensor& x, const npu::v1::Tensor& labels,
                                                            bool predictions) {
  npu::v1::EvaluateRequest request;
  request.set_trainer_id(info_.trainer_id());
  *request.mutable_x()->mutable_tensor() = x;
  *request.mutable_labels()->mutable_tensor() = labels;
  request.set_return_predictions(predictions);
  return Call<npu::v1::EvaluateResponse>(client_, &npu::v1::TrainingService::Stub::Evaluate, request);
}

absl::StatusOr<npu::v1::ExportResponse> Trainer::Export(npu::v1::ExportRequest::Format format) {
  npu::v1::ExportRequest request;
  request.set_trainer_id(info_.trainer_id());
  request.set_format(format);
  return Call<npu::v1::ExportResponse>(client_, &npu::v1::TrainingService::Stub::Export, request);
}

absl::StatusOr<npu::v1::TrainerCheckpoint> Trainer::SaveCheckpoint() {
  npu::v1::SaveCheckpointRequest request;
  request.set_trainer_id(info_.trainer_id());
  return Call<npu::v1::TrainerCheckpoint>(client_, &npu::v1::TrainingService::Stub::SaveCheckpoint, request);
}

absl::Status Trainer::RestoreCheckpoint(const npu::v1::TrainerCheckpoint& checkpoint) {
  npu::v1::RestoreCheckpointRequest request;
  request.set_trainer_id(info_.trainer_id());
  *request.mutable_checkpoint() = checkpoint;
  return Call<npu::v1::RestoreCheckpointResponse>(client_, &npu::v1::TrainingService::Stub::RestoreCheckpoint, request)
      .status();
}

}  // namespace npu::client
