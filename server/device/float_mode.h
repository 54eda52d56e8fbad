// The float mode of a device's conversions to fp16 (docs/device-model.md,
// "Float modes"): each preset has its own (DevicePreset::fp16_saturation:
// ascend910 saturation, ascend910b inf_nan), and a run or a trainer may force
// either, as torch_npu's INF_NAN_MODE_ENABLE / INF_NAN_MODE_FORCE_DISABLE do.
// A plan is made for a preset in one mode (Plan::preset carries it), so plans
// are cached per (preset, mode).
#pragma once

#include "server/device/device_preset.h"

namespace npu::device {

enum class FloatMode { kPreset, kSaturation, kInfNan };

// `preset` with its fp16 conversions in `mode` (kPreset: as it is).
DevicePreset InFloatMode(DevicePreset preset, FloatMode mode);

// Whether `preset` in `mode` saturates.
bool Saturates(const DevicePreset& preset, FloatMode mode);

// `preset` as the bench of `npu compare` computes: what a GPU does with the
// same graph, fp16 conversions in IEEE's inf_nan and the Cube's operands not
// rounded to fp16 (DevicePreset::exact_cube_operands).
DevicePreset AsBench(DevicePreset preset);

}  // namespace npu::device
