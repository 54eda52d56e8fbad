// A trainer on an npu-server (npu.v1 TrainingService, docs/training.md): made
// from a forward model and a configuration, stepped on batches, evaluated,
// exported and checkpointed. Deleted on the server when this object goes.
// Not thread-safe; the server serialises a trainer's calls anyway.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "client/client.h"
#include "npu/v1/training.pb.h"

namespace npu::client {

class Trainer {
 public:
  // `request` with its model (graph or onnx_model) and configuration set; a
  // model too large for one message is streamed (RegisterGraphStream) and
  // named by graph_id.
  static absl::StatusOr<std::unique_ptr<Trainer>> Create(Client& client, const npu::v1::CreateTrainerRequest& request);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  const npu::v1::CreateTrainerResponse& info() const { return info_; }

  absl::StatusOr<npu::v1::StepResponse> Step(const npu::v1::Tensor& x, const npu::v1::Tensor& labels,
                                             bool profile = false);
  absl::StatusOr<npu::v1::EvaluateResponse> Evaluate(const npu::v1::Tensor& x, const npu::v1::Tensor& labels,
                                                     bool predictions = false);
  absl::StatusOr<npu::v1::ExportResponse> Export(npu::v1::ExportRequest::Format format);
  absl::StatusOr<npu::v1::TrainerCheckpoint> SaveCheckpoint();
  absl::Status RestoreCheckpoint(const npu::v1::TrainerCheckpoint& checkpoint);

 private:
  Trainer(Client& client, npu::v1::CreateTrainerResponse info) : client_(client), info_(std::move(info)) {}
  // One unary TrainingService call with the client's deadline and token.
  template <typename Response, typename Request, typename Method>
  static absl::StatusOr<Response> Call(Client& client, Method method, const Request& request);

  Client& client_;
  const npu::v1::CreateTrainerResponse info_;
};

}  // namespace npu::client
