// `--float-mode saturation|inf_nan` of `npu run` and `npu train`: the mode of
// the device's fp16 conversions for the run or the trainer (npu.v1 FloatMode;
// docs/device-model.md, "Float modes"). Empty: the device preset's own.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "npu/v1/tensor.pb.h"

namespace npu::client::cli {

// A usage error naming the accepted words for anything else.
absl::StatusOr<npu::v1::FloatMode> ParseFloatModeArg(const std::string& arg);

// The word for a mode, as the CLI spells it: "saturation", "inf_nan", or for
// FLOAT_MODE_PRESET "the preset's".
const char* FloatModeWord(npu::v1::FloatMode mode);

}  // namespace npu::client::cli
