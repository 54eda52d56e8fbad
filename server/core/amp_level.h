// apex's opt level as the wire names it (npu.v1.AmpConfig.OptLevel), for the
// trainers (CreateTrainer) and the gradient graphs (RegisterGradient).
#pragma once

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "npu/v1/training.pb.h"
#include "server/train/train_config.h"

namespace npu::core {

inline absl::StatusOr<train::AmpLevel> AmpLevelOf(v1::AmpConfig::OptLevel level) {
  switch (level) {
    case v1::AmpConfig::O0: return train::AmpLevel::kO0;
    case v1::AmpConfig::O1: return train::AmpLevel::kO1;
    case v1::AmpConfig::O2: return train::AmpLevel::kO2;
    case v1::AmpConfig::O3: return train::AmpLevel::kO3;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("amp.opt_level ", static_cast<int>(level), " is unknown (O0, O1, O2, O3)"));
  }
}

}  // namespace npu::core
