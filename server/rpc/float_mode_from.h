// npu.v1's FloatMode as the core's (device/float_mode.h), for the Run and
// CreateTrainer translations. An open proto3 enum may carry any number: one
// that names no mode is refused, naming the field.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "npu/v1/tensor.pb.h"
#include "server/device/float_mode.h"

namespace npu::rpc {

inline absl::StatusOr<device::FloatMode> FloatModeFrom(v1::FloatMode mode, const std::string& field) {
  switch (mode) {
    case v1::FLOAT_MODE_PRESET: return device::FloatMode::kPreset;
    case v1::FLOAT_MODE_SATURATION: return device::FloatMode::kSaturation;
    case v1::FLOAT_MODE_INF_NAN: return device::FloatMode::kInfNan;
    default: break;
  }
  return absl::InvalidArgumentError(absl::StrCat(field, " ", static_cast<int>(mode),
                                                 " is unknown (FLOAT_MODE_PRESET, FLOAT_MODE_SATURATION, "
                                                 "FLOAT_MODE_INF_NAN)"));
}

}  // namespace npu::rpc
