// Simulated chip presets: the numbers the cost model and the tiler read.
// Every number carries its source (see ANCHORS.md); [D] marks a derived value.
#pragma once

#include <cstdint>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"

namespace npu::device {

struct DevicePreset {
  std::string name;
  // Cores that run Cube work (AIC on separated chips, the whole AI core on coupled ones).
  int cube_cores = 0;
  // Separate vector cores (AIV) on separated chips (910B); 0 when Cube and Vector share a core.
  int vector_cores = 0;
  double clock_hz = 0;
  // Per-core on-chip buffers, bytes.
  uint64_t l1_bytes = 0, l0a_bytes = 0, l0b_bytes = 0, l0c_bytes = 0, ub_bytes = 0;
  // Chip-level L2 shared by all cores, bytes (serves repeated GM reads, see l2_cache.h).
  uint64_t l2_bytes = 0;
  // Chip memory.
  uint64_t hbm_bytes = 0;
  double hbm_bytes_per_s = 0;
  // The L2's own bandwidth, the whole chip, bytes per second.
  double l2_bytes_per_s = 0;
  // One core's most GM traffic per cycle: to and from HBM (CANN's ddr_rate)
  // and served by the L2 (CANN's l2_rate), bytes per cycle.
  double gm_bytes_per_cycle = 0, l2_bytes_per_cycle = 0;
  // Per-core engine bandwidths, bytes per cycle (CANN's [AICoreMemoryRates] where
  // published). MTE2 reads GM at the two rates above; MTE1 fills L0A and L0B at
  // their own rates; MTE3 writes UB to GM; FixPipe drains L0C to GM on separated
  // cores; on coupled cores L0C drains to UB (the Vector unit's move) and then
  // through MTE3.
  double mte1_a_bytes_per_cycle = 0, mte1_b_bytes_per_cycle = 0, mte3_bytes_per_cycle = 0,
         fixpipe_bytes_per_cycle = 0, l0c_to_ub_bytes_per_cycle = 0;
  // Task dispatch: the Task Scheduler issues a task at most every task_gap_ns;
  // its first blocks start task_launch_ns after it is issued, each block pays
  // block_start_cycles on its core, and the task is done task_finish_ns after
  // its last block ends (what consumers wait for).
  double task_launch_ns = 0, task_finish_ns = 0, task_gap_ns = 0;
  uint64_t block_start_cycles = 0;
  // Overflow behaviour of fp16 results: saturate to +-65504 (Ascend 910) or IEEE inf/NaN (910B).
  bool fp16_saturation = false;
  // The bench of `npu compare` (float_mode.h's AsBench): the Cube's operands
  // stay as given, fp32 in fp32 (kernels/exact_gemm.h). Never a preset's own.
  bool exact_cube_operands = false;
  // The chip-to-chip link HCCL's ring uses between neighbouring devices of one
  // server (HCCS on training chips): bytes per second one way, and the fixed
  // cost of one ring step, seconds (collective_cost.h).
  double link_bytes_per_s = 0, link_latency_s = 0;

  bool separated() const { return vector_cores > 0; }
  // Cores that run Vector work.
  int vector_unit_cores() const { return separated() ? vector_cores : cube_cores; }
  // 16x16x16 fp16 MACs per cycle per core, times 2 flops.
  double peak_fp16_flops() const { return cube_cores * 4096.0 * 2.0 * clock_hz; }
  uint64_t CyclesOfNs(double ns) const { return static_cast<uint64_t>(ns * clock_hz / 1e9 + 0.5); }
};

// Known presets: "ascend310", "ascend910", "ascend910b".
absl::StatusOr<DevicePreset> PresetByName(absl::string_view name);
std::vector<std::string> PresetNames();

// A preset from a spec, as `npu-server --preset` takes it:
//   "ascend910"                         a known preset
//   "ascend910,cube_cores=8,clock_hz=1.5e9"  a known preset with fields overridden
//   "@chip.preset"                      a file of key=value lines ('#' comments);
//                                       "base=NAME" picks the preset to start from
//                                       (default ascend910), "name=..." names it
// Keys are the DevicePreset field names (PresetKeys()). The result is checked:
// counts and sizes positive, the Cube tile and a Vector chunk must fit.
absl::StatusOr<DevicePreset> ParsePresetSpec(absl::string_view spec);
std::vector<std::string> PresetKeys();

// INVALID_ARGUMENT naming the field when a preset cannot describe a chip.
absl::Status ValidatePreset(const DevicePreset& p);

}  // namespace npu::device
