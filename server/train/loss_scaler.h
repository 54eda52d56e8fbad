// apex's LossScaler (NVIDIA/apex apex/amp/scaler.py): the loss is multiplied
// by the scale before the backward pass and the gradients by 1 / scale after
// it. A dynamic scaler halves the scale when a step overflows (the step is
// skipped) and doubles it after `window` steps in a row without one, within
// [min_scale, max_scale]. A static scale never changes; a step that
// overflows with it is skipped too (upstream apex would apply it, inf and
// all), and the trainer says so.
#pragma once

#include <cstdint>

#include "server/train/train_config.h"

namespace npu::train {

class LossScaler {
 public:
  explicit LossScaler(const LossScaleConfig& config);

  double scale() const { return scale_; }
  int64_t clean_steps() const { return unskipped_; }

  // After a step whose float status was `overflow`: updates the scale and
  // returns whether the step was skipped.
  bool Update(bool overflow);

  // For checkpoints.
  void Restore(double scale, int64_t clean_steps) { scale_ = scale, unskipped_ = clean_steps; }

 private:
  LossScaleConfig config_;
  double scale_;
  int64_t unskipped_ = 0;
};

}  // namespace npu::train
