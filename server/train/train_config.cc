#include "server/train/train_config.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace npu::train {

absl::Status ValidateConfig(const TrainConfig& c) {
  const OptimizerConfig& o = c.optimizer;
  auto bad = [](const char* field, double v, const char* want) {
    return absl::InvalidArgumentError(absl::StrCat(field, " = ", v, ": ", want));
  };
  if (!(o.lr > 0) || !std::isfinite(o.lr)) return bad("learning rate", o.lr, "must be positive");
  if (o.kind == OptimizerKind::kMomentum && !(o.momentum > 0 && o.momentum < 1)) {
    return bad("momentum", o.momentum, "must be in (0, 1)");
  }
  if (!(o.weight_decay >= 0) || !std::isfinite(o.weight_decay)) return bad("weight decay", o.weight_decay, "must be >= 0");
  if (o.kind == OptimizerKind::kAdam || o.kind == OptimizerKind::kAdamW) {
    if (!(o.beta1 >= 0 && o.beta1 < 1)) return bad("beta1", o.beta1, "must be in [0, 1)");
    if (!(o.beta2 >= 0 && o.beta2 < 1)) return bad("beta2", o.beta2, "must be in [0, 1)");
    if (!(o.epsilon > 0)) return bad("epsilon", o.epsilon, "must be positive");
  }
  const LossScaleConfig& s = c.loss_scale;
  if (!(s.scale > 0) || !std::isfinite(s.scale) || s.scale > 3.0e38) return bad("loss scale", s.scale, "must be a positive float");
  if (s.dynamic) {
    if (s.window < 1) return bad("loss scale window", static_cast<double>(s.window), "must be >= 1");
    if (!(s.factor > 1)) return bad("loss scale factor", s.factor, "must be > 1");
    if (!(s.max_scale > 0)) return bad("max loss scale", s.max_scale, "must be positive");
    if (!(s.min_scale >= 0) || s.min_scale > s.max_scale) return bad("min loss scale", s.min_scale, "must be in [0, max scale]");
  }
  if (c.ddp.bucket_bytes < 1) return bad("bucket bytes", static_cast<double>(c.ddp.bucket_bytes), "must be >= 1");
  if (c.ddp.first_bucket_bytes < 1) {
    return bad("first bucket bytes", static_cast<double>(c.ddp.first_bucket_bytes), "must be >= 1");
  }
  return absl::OkStatus();
}

LossScaleConfig ApexDynamicLossScale() {
  return LossScaleConfig{.dynamic = true, .scale = 65536.0, .window = 2000, .factor = 2.0, .min_scale = 0.0,
                         .max_scale = 16777216.0};
}

const char* AmpName(AmpLevel level) {
  switch (level) {
    case AmpLevel::kO0: return "O0";
    case AmpLevel::kO1: return "O1";
    case AmpLevel::kO2: return "O2";
    case AmpLevel::kO3: return "O3";
  }
  return "?";
}

}  // namespace npu::train
