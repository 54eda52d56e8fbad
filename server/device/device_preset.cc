#include "server/device/device_preset.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace npu::device {
namespace {

constexpr uint64_t KiB = 1024, MiB = 1024 * KiB, GiB = 1024 * MiB;

// Engine widths are not published; these are the model's assumptions, chosen so
// a 16x16x16 fractal step is fed in one cycle: MTE1 moves one 512 B fractal of A
// and one of B per cycle (1024 B), FixPipe drains one 16x16 fp32 block (1 KiB) in
// 4 cycles, MTE2/MTE3 move 128 B per cycle per core (bounded further by HBM).
void SetEngineWidths(DevicePreset& p) {
  p.mte1_bytes_per_cycle = 1024;
  p.mte2_bytes_per_cycle = 128;
  p.mte3_bytes_per_cycle = 128;
  p.fixpipe_bytes_per_cycle = 256;
}

DevicePreset Ascend910() {
  DevicePreset p;
  p.name = "ascend910";
  p.cube_cores = 32;                         // Hot Chips 31; Linley 2019
  p.clock_hz = 1.0e9;                        // [D] 256 TFLOPS / (32 * 4096 * 2) = 0.98 GHz, rounded
  p.l1_bytes = 1 * MiB;                      // Hot Chips 31
  p.l0a_bytes = 64 * KiB;
  p.l0b_bytes = 64 * KiB;
  p.l0c_bytes = 256 * KiB;
  p.ub_bytes = 256 * KiB;
  p.hbm_bytes = 32 * GiB;                    // Linley 2019: 32 GB HBM2
  p.hbm_bytes_per_s = 1.2e12;                // [S] ~1.2 TB/s (one measurement 1148 GB/s)
  p.fp16_saturation = true;                  // torch_npu / CANN docs: 910 is saturation-only
  SetEngineWidths(p);
  return p;
}

DevicePreset Ascend310() {
  DevicePreset p;
  p.name = "ascend310";
  p.cube_cores = 2;                          // HiSilicon "Key information about Ascend 310"
  p.clock_hz = 1.0e9;                        // [D] 8 TFLOPS / (2 * 4096 * 2) = 0.98 GHz; the 680 MHz test
                                             // stub would give 5.6 TFLOPS, so we keep the published 8 TFLOPS
  p.l1_bytes = 1 * MiB;                      // same core generation as 910 (Hot Chips 31)
  p.l0a_bytes = 64 * KiB;
  p.l0b_bytes = 64 * KiB;
  p.l0c_bytes = 256 * KiB;
  p.ub_bytes = 256 * KiB;
  p.hbm_bytes = 8 * GiB;                     // Atlas 300I card: 8 GB LPDDR4X per chip [S]
  p.hbm_bytes_per_s = 47.7e9;                // LPDDR4X [S]
  p.fp16_saturation = true;
  SetEngineWidths(p);
  return p;
}

DevicePreset Ascend910B() {
  DevicePreset p;
  p.name = "ascend910b";
  p.cube_cores = 24;                         // CANN ini quoted by huawei-csl/pto-dsl (910B2)
  p.vector_cores = 48;                       // 1 AIC : 2 AIV (Ascend C guide)
  p.clock_hz = 1.8e9;                        // [S] CANN ini: cube freq 1800 MHz
  p.l1_bytes = 512 * KiB;                    // hicann/catlass arch header
  p.l0a_bytes = 64 * KiB;
  p.l0b_bytes = 64 * KiB;
  p.l0c_bytes = 128 * KiB;
  p.ub_bytes = 192 * KiB;                    // catlass; one secondary source says 256 KB: we follow Huawei's header
  p.hbm_bytes = 64 * GiB;
  p.hbm_bytes_per_s = 1.6e12;                // not published; third parties 0.4-1.6 TB/s: upper end, HBM2e x4
  p.fp16_saturation = false;                 // 910B defaults to IEEE inf/NaN
  SetEngineWidths(p);
  return p;
}

}  // namespace

std::vector<std::string> PresetNames() { return {"ascend310", "ascend910", "ascend910b"}; }

absl::StatusOr<DevicePreset> PresetByName(absl::string_view name) {
  if (name == "ascend910") return Ascend910();
  if (name == "ascend310") return Ascend310();
  if (name == "ascend910b") return Ascend910B();
  return absl::InvalidArgumentError(absl::StrCat("unknown device preset \"", name,
                                                 "\"; known: ", absl::StrJoin(PresetNames(), ", ")));
}

}  // namespace npu::device
