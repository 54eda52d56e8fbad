// How an AI core moves a finished C tile out of L0C. Separated cores (the
// 910B's AIC) have a FixPipe that writes L0C to GM, casting on the way;
// coupled cores (910, 310) have none: the Vector unit moves L0C to UB (casting
// fp32 results as it goes) and MTE3 writes UB to GM.
#pragma once

#include <cstdint>

#include "server/device/device_preset.h"
#include "server/device/tile_work.h"

namespace npu::device {

// Adds the drain of one C tile: `accumulator_bytes` of fp32 in L0C becoming
// `out_bytes` in GM.
inline void DrainCubeTile(uint64_t accumulator_bytes, uint64_t out_bytes, const DevicePreset& preset, TileWork& w) {
  if (preset.separated()) {
    w.fixpipe_bytes += out_bytes;
  } else {
    w.l0c_to_ub_bytes += accumulator_bytes;
    w.mte3_bytes += out_bytes;
  }
}

}  // namespace npu::device
