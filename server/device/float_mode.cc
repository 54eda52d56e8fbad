#include "server/device/float_mode.h"

namespace npu::device {

bool Saturates(const DevicePreset& preset, FloatMode mode) {
  switch (mode) {
    case FloatMode::kSaturation: return true;
    case FloatMode::kInfNan: return false;
    case FloatMode::kPreset: break;
  }
  return preset.fp16_saturation;
}

DevicePreset InFloatMode(DevicePreset preset, FloatMode mode) {
  preset.fp16_saturation = Saturates(preset, mode);
  return preset;
}

DevicePreset AsBench(DevicePreset preset) {
  preset.fp16_saturation = false;
  preset.exact_cube_operands = true;
  return preset;
}

}  // namespace npu::device
