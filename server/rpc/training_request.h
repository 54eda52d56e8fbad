// npu.v1 TrainingService messages <-> the trainer's plain values: the
// configuration of CreateTrainer (apex's and torch.optim's defaults where a
// field is unset) and TrainerCheckpoint. Errors are INVALID_ARGUMENT naming
// the field.
#pragma once

#include "absl/status/statusor.h"
#include "npu/v1/training.pb.h"
#include "server/train/trainer.h"
#include "server/train/train_config.h"

namespace npu::rpc {

absl::StatusOr<train::TrainConfig> TrainConfigFromRequest(const v1::CreateTrainerRequest& req);

// What SaveCheckpoint returns for `trainer`'s state.
v1::TrainerCheckpoint CheckpointOf(const train::Trainer& trainer);

// The state a checkpoint holds, checked against `trainer` (its parameters by
// name, optimizer and amp level; Trainer::Restore checks types and shapes).
absl::StatusOr<train::TrainerState> StateFromCheckpoint(const v1::TrainerCheckpoint& c, const train::Trainer& trainer);

}  // namespace npu::rpc
