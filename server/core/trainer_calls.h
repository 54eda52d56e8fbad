// A request whose target is a trainer (TrainerRef): one training step or one
// evaluation of the tenant's trainer on the batch in its inputs "x" and
// "labels" (inline or handles). It runs on the calling thread, which waits for
// the trainer's devices. A step answers its scalars in Response::values
// (step, loss, loss_scale, next_loss_scale, skipped, overflow_elements) and,
// when asked, one profile per device; an evaluation answers loss, correct,
// count and, for cross_entropy, accuracy, and with return_predictions the
// output "predictions" (FLOAT32 [count, n]).
#pragma once

#include <memory>

#include "server/core/serve_call.h"

namespace npu::core {

void ServeTrainer(const std::shared_ptr<ServeCall>& call);

}  // namespace npu::core
