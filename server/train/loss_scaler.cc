#include "server/train/loss_scaler.h"

#include <algorithm>

namespace npu::train {

LossScaler::LossScaler(const LossScaleConfig& config)
    : config_(config), scale_(config.dynamic ? std::min(config.scale, config.max_scale) : config.scale) {}

bool LossScaler::Update(bool overflow) {
  if (!config_.dynamic) return overflow;
  if (overflow) {
    scale_ = std::max(config_.min_scale, scale_ / config_.factor);
    unskipped_ = 0;
    return true;
  }
  if (++unskipped_ == config_.window) {
    scale_ = std::min(config_.max_scale, scale_ * config_.factor);
    unskipped_ = 0;
  }
  return false;
}

}  // namespace npu::train
