// npu.v1 TrainingService (protos/npu/v1/training.proto, docs/training.md):
// trainers per tenant over server/train's Trainer. A Step runs on the
// trainer's devices through the runner like any run; calls on one trainer are
// serialised by it, calls on different trainers run at once. A Step or
// Evaluate whose client gives up (cancels, passes its deadline) stops its
// device work (call_watch.h) and changes nothing.
#pragma once

#include "npu/v1/training.grpc.pb.h"
#include "server/rpc/call_watch.h"
#include "server/core/server_state.h"
#include "server/core/request.h"

namespace npu::rpc {

class TrainingServiceImpl final : public v1::TrainingService::Service {
 public:
  explicit TrainingServiceImpl(core::ServerState& state) : state_(state) {}

  grpc::Status CreateTrainer(grpc::ServerContext* ctx, const v1::CreateTrainerRequest* req,
                             v1::CreateTrainerResponse* resp) override;
  grpc::Status Step(grpc::ServerContext* ctx, const v1::StepRequest* req, v1::StepResponse* resp) override;
  grpc::Status Evaluate(grpc::ServerContext* ctx, const v1::EvaluateRequest* req,
                        v1::EvaluateResponse* resp) override;
  grpc::Status Export(grpc::ServerContext* ctx, const v1::ExportRequest* req, v1::ExportResponse* resp) override;
  grpc::Status SaveCheckpoint(grpc::ServerContext* ctx, const v1::SaveCheckpointRequest* req,
                              v1::TrainerCheckpoint* resp) override;
  grpc::Status RestoreCheckpoint(grpc::ServerContext* ctx, const v1::RestoreCheckpointRequest* req,
                                 v1::RestoreCheckpointResponse* resp) override;
  grpc::Status DeleteTrainer(grpc::ServerContext* ctx, const v1::DeleteTrainerRequest* req,
                             v1::DeleteTrainerResponse* resp) override;

 private:
  absl::Status DoCreate(const std::string& tenant, const v1::CreateTrainerRequest& req,
                        v1::CreateTrainerResponse* resp);
  absl::Status DoStep(const std::string& tenant, const grpc::ServerContext& ctx, const v1::StepRequest& req,
                      v1::StepResponse* resp);
  absl::Status DoEvaluate(const std::string& tenant, const grpc::ServerContext& ctx, const v1::EvaluateRequest& req,
                          v1::EvaluateResponse* resp);
  // A token that fires when `ctx`'s client gives up, and its watch (counted
  // in runs_cancelled when it stopped the work).
  struct CallToken {
    std::shared_ptr<device::CancelToken> token = std::make_shared<device::CancelToken>();
    std::unique_ptr<CallWatcher::Watch> watch;
  };
  CallToken WatchCall(const grpc::ServerContext& ctx, const char* what);
  absl::Status DoExport(const std::string& tenant, const v1::ExportRequest& req, v1::ExportResponse* resp);
  // A Step or Evaluate, translated and served by the core (core/trainer_calls.h).
  absl::StatusOr<core::Response> ServeTrainerCall(const std::string& tenant, const grpc::ServerContext& ctx,
                                                  core::TrainerRef target, const v1::BatchTensor& x,
                                                  const v1::BatchTensor& labels, bool profile, bool predictions);

  core::ServerState& state_;
  CallWatcher watcher_;
};

}  // namespace npu::rpc
