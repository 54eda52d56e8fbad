// The TrainingService under generated requests, for fuzz/training_fuzzer.cc
// and the seeded CI run: a real npu-server in the process, called over
// loopback gRPC as clients call it. A case creates a trainer (a small MLP as
// an npu.v1.Graph or as ONNX, possibly mutated; trainable names right, wrong
// or repeated; any loss, optimizer kind and hyper-parameters from 0 and
// negative to NaN and huge; amp levels and loss scales; devices and
// backends, right or not), then steps and evaluates it on batches of right
// and wrong shapes, dtypes and label values, saves a checkpoint and restores
// it altered, exports it, and deletes it; some cases also register the
// model's gradient graphs (RuntimeService.RegisterGradient, with right and
// wrong parameters, wrt, amp levels and devices) and run their forward and
// backward. The oracle: every status is a clear
// one (never INTERNAL or UNKNOWN), the server keeps answering, and a trainer
// that was made can be deleted.
#pragma once

#include <string>

#include "fuzz/choice_source.h"

namespace npu::fuzz {

// "" or what the oracle found.
std::string RunTrainingCase(ChoiceSource& src);

}  // namespace npu::fuzz
