// How a model is trained: loss, optimizer, mixed precision (apex's opt levels)
// and loss scaling (apex's LossScaler). Plain values; the rpc layer fills them
// from npu.v1 TrainerConfig and checks them (ValidateConfig).
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "server/device/float_mode.h"

namespace npu::train {

enum class LossKind { kCrossEntropy, kMse };
enum class OptimizerKind { kSgd, kMomentum, kAdam, kAdamW };
// apex's opt levels: O0 fp32; O1 the Cube ops (MatMul, Gemm, Conv) in fp16,
// the rest fp32; O2 an fp16 model (BatchNormalization kept fp32) with fp32
// master weights in the optimizer; O3 pure fp16 (no master weights).
enum class AmpLevel { kO0, kO1, kO2, kO3 };

struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::kSgd;
  double lr = 0.01;
  double momentum = 0.9;       // kMomentum
  bool nesterov = false;       // kMomentum
  double weight_decay = 0.0;   // L2 added to the gradient (SGD, Adam); decoupled for AdamW
  double beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8;  // Adam, AdamW
};

// apex's LossScaler: a static scale, or a dynamic one that starts at
// min(`scale`, `max_scale`), doubles after `window` steps without overflow (up
// to `max_scale`) and halves on an overflow (down to `min_scale`), the step
// being skipped. Defaults are apex's (dynamic: 2^16, x2 after 2000, x0.5).
struct LossScaleConfig {
  bool dynamic = false;
  double scale = 1.0;
  int64_t window = 2000;
  double factor = 2.0;
  double min_scale = 0.0;  // 0: none
  double max_scale = 16777216.0;  // 2^24
};

// apex's dynamic scaler as amp.initialize(loss_scale="dynamic") makes it
// (apex/amp/scaler.py): 2^16 at the start, x2 after 2000 clean steps in a
// row, x0.5 on an overflow, at most 2^24, no minimum. What a request's
// DynamicLossScale leaves unset takes these values.
LossScaleConfig ApexDynamicLossScale();

// Data parallelism over several devices, as torch's DistributedDataParallel:
// gradients are averaged by one allreduce per bucket, buckets filled in the
// reverse order of the parameters (the order backward produces them), the
// first up to first_bucket_bytes, the others up to bucket_bytes (DDP's
// _DEFAULT_FIRST_BUCKET_BYTES and bucket_cap_mb).
struct DdpConfig {
  int64_t bucket_bytes = int64_t{25} << 20;
  int64_t first_bucket_bytes = int64_t{1} << 20;
};

struct TrainConfig {
  LossKind loss = LossKind::kCrossEntropy;
  OptimizerConfig optimizer;
  AmpLevel amp = AmpLevel::kO0;
  LossScaleConfig loss_scale;
  DdpConfig ddp;
  uint64_t seed = 0;  // dropout masks
  // The fp16 conversions' mode of every step, evaluation and O2 conversion
  // (device/float_mode.h); kPreset: the devices'.
  device::FloatMode float_mode = device::FloatMode::kPreset;
};

// Whether an overflow skips the step: not at O0 without loss scaling (a
// static scale of 1: torch's own fp32 training, where a model's own
// infinities, such as an attention mask's -inf, set the float status every
// step); with any scale in play, as apex's scaler does.
inline bool SkipsOnOverflow(const TrainConfig& c) {
  return c.amp != AmpLevel::kO0 || c.loss_scale.dynamic || c.loss_scale.scale != 1.0;
}


// INVALID_ARGUMENT naming the field that is out of range.
absl::Status ValidateConfig(const TrainConfig& c);

const char* AmpName(AmpLevel level);

}  // namespace npu::train
