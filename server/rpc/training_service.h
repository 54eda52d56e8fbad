// npu.v1 TrainingService (protos/npu/v1/training.proto, docs/training.md):
// trainers per tenant over server/train's Trainer. Every call is a unary call
// on the server's call queue (unary_call.h), run on the core's work pool since
// it waits (a step for its devices). Step and Evaluate are translated into the
// core's request and served by it (core/trainer_calls.h); steps on one
// trainer run in order, calls on different trainers at once. A Step or
// Evaluate whose client gives up (cancels, passes its deadline) stops its
// device work at once (the call's token fires, pushed by gRPC) and changes
// nothing.
#pragma once

#include "npu/v1/training.grpc.pb.h"
#include "server/core/server_state.h"
#include "server/core/request.h"
#include "server/rpc/unary_call.h"

namespace npu::rpc {

using TrainingAsyncService = v1::TrainingService::WithRawMethod_CreateTrainer<
    v1::TrainingService::WithRawMethod_Step<v1::TrainingService::WithRawMethod_Evaluate<
        v1::TrainingService::WithRawMethod_Export<v1::TrainingService::WithRawMethod_SaveCheckpoint<
            v1::TrainingService::WithRawMethod_RestoreCheckpoint<
                v1::TrainingService::WithRawMethod_DeleteTrainer<v1::TrainingService::Service>>>>>>>;

class TrainingServiceImpl final : public TrainingAsyncService {
 public:
  explicit TrainingServiceImpl(core::ServerState& state) : state_(state) {}
  void AddMethods(UnaryMethods& methods);

 private:
  absl::Status DoCreate(const std::string& tenant, const v1::CreateTrainerRequest& req,
                        v1::CreateTrainerResponse* resp);
  absl::Status DoStep(const std::string& tenant, std::shared_ptr<device::CancelToken> cancel,
                      const v1::StepRequest& req, v1::StepResponse* resp);
  absl::Status DoEvaluate(const std::string& tenant, std::shared_ptr<device::CancelToken> cancel,
                          const v1::EvaluateRequest& req, v1::EvaluateResponse* resp);
  absl::Status DoExport(const std::string& tenant, const v1::ExportRequest& req, v1::ExportResponse* resp);
  absl::Status DoRestore(const std::string& tenant, const v1::RestoreCheckpointRequest& req,
                         v1::RestoreCheckpointResponse* resp);
  // A Step or Evaluate, translated and served by the core (core/trainer_calls.h).
  absl::StatusOr<core::Response> ServeTrainerCall(const std::string& tenant,
                                                  std::shared_ptr<device::CancelToken> cancel,
                                                  core::TrainerRef target, const v1::BatchTensor& x,
                                                  const v1::BatchTensor& labels, bool profile, bool predictions);

  core::ServerState& state_;
};

}  // namespace npu::rpc
