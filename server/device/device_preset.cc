#include "server/device/device_preset.h"

#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <type_traits>
#include <variant>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace npu::device {
namespace {

constexpr uint64_t KiB = 1024, MiB = 1024 * KiB, GiB = 1024 * MiB;

// The engine rates CANN publishes in its platform ini [AICoreMemoryRates]
// (bytes per cycle per core), as Huawei's own tests quote them for the 310 and
// 310P and public repositories for the 910B: l1_to_l0_a_rate 512,
// l1_to_l0_b_rate 256, ub_to_ddr / ub_to_l2 64. FixPipe's rate is not
// published: the model assumes 256 B/cycle (one 16x16 fp32 block in 4 cycles).
void SetEngineRates(DevicePreset& p) {
  p.mte1_a_bytes_per_cycle = 512;
  p.mte1_b_bytes_per_cycle = 256;
  p.mte3_bytes_per_cycle = 64;
  p.fixpipe_bytes_per_cycle = 256;
  p.l0c_to_ub_bytes_per_cycle = 256;  // [P] l0_c_to_ub_rate of the 310 (same core generation as the 910)
}

// Task dispatch costs. Not published per task; fitted to the one public point
// where they matter (a 1024^3 fp16 matmul on a 910B2 takes 21.9 us for 15 us of
// Cube work, docs/device-model.md): the Task Scheduler issues a task at most
// every 1 us, its blocks start 3 us after issue, it reports done 2 us after
// its last block, and a block's start (arguments, instruction fetch) costs
// 1000 cycles on its core.
void SetDispatchCosts(DevicePreset& p) {
  p.task_gap_ns = 1000;
  p.task_launch_ns = 3000;
  p.task_finish_ns = 2000;
  p.block_start_cycles = 1000;
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
  p.l2_bytes = 32 * MiB;                     // Hot Chips 31 / Linley 2019: 32 MB L2
  p.hbm_bytes = 32 * GiB;                    // Linley 2019: 32 GB HBM2
  p.hbm_bytes_per_s = 1.2e12;                // [S] ~1.2 TB/s (one measurement 1148 GB/s)
  p.gm_bytes_per_cycle = 64;                 // not published for the 910: assumed, so 19 of 32 cores fill HBM
  p.l2_bytes_per_cycle = 114;                // [S] CANN l2_rate of the 310P (same core family), as hicann tests quote it
  p.l2_bytes_per_s = 32 * 114 * 1.0e9;       // [D] every core at its L2 rate
  p.fp16_saturation = true;                  // torch_npu / CANN docs: 910 is saturation-only
  p.link_bytes_per_s = 30e9;                 // [S] HCCS 240 Gbit/s per link (Ascend 910 spec sheets)
  p.link_latency_s = 2e-6;                   // [A] not published: per ring step (docs/device-model.md)
  SetEngineRates(p);
  SetDispatchCosts(p);
  return p;
}

DevicePreset Ascend310() {
  DevicePreset p;
  p.name = "ascend310";
  p.cube_cores = 2;                          // HiSilicon "Key information about Ascend 310"
  p.clock_hz = 0.5e9;                        // [D] 8 TFLOPS / (2 cores * 4096 MAC * 2) = 0.49 GHz, rounded;
                                             // Huawei's Atlas 200I A2 kit lists a 500 MHz Da Vinci core at
                                             // 4 TFLOPS, which agrees. A Huawei test stub's 680 MHz would
                                             // give 11 TFLOPS, above the published 8: we keep the published
  p.l1_bytes = 1 * MiB;                      // same core generation as 910 (Hot Chips 31)
  p.l0a_bytes = 64 * KiB;
  p.l0b_bytes = 64 * KiB;
  p.l0c_bytes = 256 * KiB;
  p.ub_bytes = 256 * KiB;
  p.l2_bytes = 8 * MiB;                      // [S] "8 MB on-chip buffer" in 310 spec sheets
  p.hbm_bytes = 8 * GiB;                     // Atlas 300I card: 8 GB LPDDR4X per chip [S]
  p.hbm_bytes_per_s = 51.2e9;                // LPDDR4X, 51.2 GB/s [S] (model v2 had it in GiB/s)
  p.gm_bytes_per_cycle = 67;                 // [P] CANN ddr_rate of the 310 (hicann/ge test stub, Ascend310 compile info)
  p.l2_bytes_per_cycle = 128;                // [P] CANN l2_rate, same sources
  p.l2_bytes_per_s = 2 * 128 * 0.5e9;        // [D] both cores at their L2 rate
  p.fp16_saturation = true;
  p.link_bytes_per_s = 3.94e9;               // [D] no HCCS: PCIe 3.0 x4 (8 GT/s x 4 lanes, 128b/130b)
  p.link_latency_s = 10e-6;                  // [A] a PCIe hop through the host
  SetEngineRates(p);
  SetDispatchCosts(p);
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
  p.l2_bytes = 192 * MiB;                    // CANN ini quoted by huawei-csl/pto-dsl (910B2)
  p.hbm_bytes = 64 * GiB;
  p.hbm_bytes_per_s = 1.6e12;                // not published; third parties 0.4-1.6 TB/s: upper end, HBM2e x4
  p.gm_bytes_per_cycle = 32;                 // [S] CANN ddr_rate of the 910B (Ascend910B1/B4 ini as quoted)
  p.l2_bytes_per_cycle = 110;                // [S] CANN l2_read_rate of the 910B1 ini as quoted
  p.l2_bytes_per_s = 5 * 1.6e12;             // [S] L2 at 5x DDR bandwidth on C220 chips (MindSpore DVM's SoC table)
  p.fp16_saturation = false;                 // 910B defaults to IEEE inf/NaN
  p.link_bytes_per_s = 56e9;                 // [S] HCCS 392 GB/s full mesh over 7 links (Atlas 800T A2)
  p.link_latency_s = 2e-6;                   // [A] as the 910
  SetEngineRates(p);
  SetDispatchCosts(p);
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


namespace {

// Every field a preset spec may set, by name: one table for PresetKeys and SetField.
using FieldMember = std::variant<std::string DevicePreset::*, int DevicePreset::*, uint64_t DevicePreset::*,
                                 double DevicePreset::*, bool DevicePreset::*>;
struct PresetField {
  const char* name;
  FieldMember member;
};

const std::vector<PresetField>& Fields() {
  static const std::vector<PresetField> fields = {
      {"name", &DevicePreset::name},
      {"cube_cores", &DevicePreset::cube_cores},
      {"vector_cores", &DevicePreset::vector_cores},
      {"clock_hz", &DevicePreset::clock_hz},
      {"l1_bytes", &DevicePreset::l1_bytes},
      {"l0a_bytes", &DevicePreset::l0a_bytes},
      {"l0b_bytes", &DevicePreset::l0b_bytes},
      {"l0c_bytes", &DevicePreset::l0c_bytes},
      {"ub_bytes", &DevicePreset::ub_bytes},
      {"l2_bytes", &DevicePreset::l2_bytes},
      {"hbm_bytes", &DevicePreset::hbm_bytes},
      {"hbm_bytes_per_s", &DevicePreset::hbm_bytes_per_s},
      {"l2_bytes_per_s", &DevicePreset::l2_bytes_per_s},
      {"gm_bytes_per_cycle", &DevicePreset::gm_bytes_per_cycle},
      {"l2_bytes_per_cycle", &DevicePreset::l2_bytes_per_cycle},
      {"mte1_a_bytes_per_cycle", &DevicePreset::mte1_a_bytes_per_cycle},
      {"mte1_b_bytes_per_cycle", &DevicePreset::mte1_b_bytes_per_cycle},
      {"mte3_bytes_per_cycle", &DevicePreset::mte3_bytes_per_cycle},
      {"fixpipe_bytes_per_cycle", &DevicePreset::fixpipe_bytes_per_cycle},
      {"l0c_to_ub_bytes_per_cycle", &DevicePreset::l0c_to_ub_bytes_per_cycle},
      {"task_launch_ns", &DevicePreset::task_launch_ns},
      {"task_finish_ns", &DevicePreset::task_finish_ns},
      {"task_gap_ns", &DevicePreset::task_gap_ns},
      {"block_start_cycles", &DevicePreset::block_start_cycles},
      {"fp16_saturation", &DevicePreset::fp16_saturation},
      {"link_bytes_per_s", &DevicePreset::link_bytes_per_s},
      {"link_latency_s", &DevicePreset::link_latency_s},
  };
  return fields;
}

}  // namespace

std::vector<std::string> PresetKeys() {
  std::vector<std::string> keys;
  for (const PresetField& f : Fields()) keys.push_back(f.name);
  return keys;
}

namespace {

absl::Status SetField(DevicePreset& p, absl::string_view key, absl::string_view value) {
  auto bad = [&] {
    return absl::InvalidArgumentError(absl::StrCat("preset field ", key, ": cannot read \"", value, "\""));
  };
  for (const PresetField& f : Fields()) {
    if (key != f.name) continue;
    return std::visit(
        [&](auto member) -> absl::Status {
          auto& field = p.*member;
          using T = std::decay_t<decltype(field)>;
          if constexpr (std::is_same_v<T, std::string>) {
            field = std::string(value);
            return absl::OkStatus();
          } else if constexpr (std::is_same_v<T, bool>) {
            return absl::SimpleAtob(value, &field) ? absl::OkStatus() : bad();
          } else if constexpr (std::is_same_v<T, double>) {
            return absl::SimpleAtod(value, &field) ? absl::OkStatus() : bad();
          } else {
            return absl::SimpleAtoi(value, &field) ? absl::OkStatus() : bad();
          }
        },
        f.member);
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown preset field \"", key, "\"; known: ",
                                                 absl::StrJoin(PresetKeys(), ", ")));
}

// Applies "key=value" items over the preset named by "base" (first) or the default.
absl::StatusOr<DevicePreset> FromItems(const std::vector<std::pair<std::string, std::string>>& items,
                                       absl::string_view base, const std::string& default_name) {
  auto preset = PresetByName(base);
  if (!preset.ok()) return preset.status();
  preset->name = default_name;
  for (const auto& [key, value] : items) {
    if (key == "base") continue;
    if (auto s = SetField(*preset, key, value); !s.ok()) return s;
  }
  if (auto s = ValidatePreset(*preset); !s.ok()) return s;
  return preset;
}

absl::StatusOr<std::pair<std::string, std::string>> SplitItem(absl::string_view item, absl::string_view where) {
  std::pair<std::string, std::string> kv = absl::StrSplit(item, absl::MaxSplits('=', 1));
  kv.first = std::string(absl::StripAsciiWhitespace(kv.first));
  kv.second = std::string(absl::StripAsciiWhitespace(kv.second));
  if (kv.first.empty() || kv.second.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": expected key=value, got \"", item, "\""));
  }
  return kv;
}

}  // namespace

absl::Status ValidatePreset(const DevicePreset& p) {
  auto bad = [&](const char* field, const char* why) {
    return absl::InvalidArgumentError(absl::StrCat("preset \"", p.name, "\": ", field, " ", why));
  };
  if (p.cube_cores < 1 || p.cube_cores > 4096) return bad("cube_cores", "must be 1..4096");
  if (p.vector_cores < 0 || p.vector_cores > 8192) return bad("vector_cores", "must be 0..8192");
  if (!(p.clock_hz >= 1e6 && p.clock_hz <= 1e11)) return bad("clock_hz", "must be 1e6..1e11");
  if (!(p.hbm_bytes_per_s > 0)) return bad("hbm_bytes_per_s", "must be positive");
  if (!(p.l2_bytes_per_s > 0)) return bad("l2_bytes_per_s", "must be positive");
  for (auto [field, v] : {std::pair{"gm_bytes_per_cycle", p.gm_bytes_per_cycle},
                          std::pair{"l2_bytes_per_cycle", p.l2_bytes_per_cycle},
                          std::pair{"mte1_a_bytes_per_cycle", p.mte1_a_bytes_per_cycle},
                          std::pair{"mte1_b_bytes_per_cycle", p.mte1_b_bytes_per_cycle},
                          std::pair{"mte3_bytes_per_cycle", p.mte3_bytes_per_cycle},
                          std::pair{"fixpipe_bytes_per_cycle", p.fixpipe_bytes_per_cycle},
                          std::pair{"l0c_to_ub_bytes_per_cycle", p.l0c_to_ub_bytes_per_cycle}}) {
    if (!(v > 0)) return bad(field, "must be positive");
  }
  for (auto [field, v] : {std::pair{"task_launch_ns", p.task_launch_ns}, std::pair{"task_finish_ns", p.task_finish_ns},
                          std::pair{"task_gap_ns", p.task_gap_ns}}) {
    if (!(v >= 0 && v <= 1e9)) return bad(field, "must be 0..1e9 ns");
  }
  if (p.block_start_cycles > (uint64_t{1} << 32)) return bad("block_start_cycles", "must be below 2^32");
  if (!(p.link_bytes_per_s > 0)) return bad("link_bytes_per_s", "must be positive");
  if (!(p.link_latency_s >= 0 && p.link_latency_s <= 1)) return bad("link_latency_s", "must be 0..1 s");
  if (p.hbm_bytes == 0) return bad("hbm_bytes", "must be positive");
  // The smallest Cube tile (16x16 fractals, 64-deep K slice, double-buffered)
  // and the smallest Vector chunk (one 256 B repeat per operand, double-buffered)
  // must fit; the tilers grow from there.
  if (p.l0a_bytes < 16 * 64 * 2 * 2) return bad("l0a_bytes", "cannot hold one double-buffered 16x64 fp16 slice");
  if (p.l0b_bytes < 16 * 64 * 2 * 2) return bad("l0b_bytes", "cannot hold one double-buffered 64x16 fp16 slice");
  if (p.l0c_bytes < 16 * 16 * 4) return bad("l0c_bytes", "cannot hold one 16x16 fp32 fractal");
  if (p.l1_bytes < 32 * 64 * 2 * 2) return bad("l1_bytes", "cannot hold the smallest double-buffered panels");
  if (p.ub_bytes < 256 * 4 * 2) return bad("ub_bytes", "cannot hold a double-buffered 256 B repeat per operand");
  return absl::OkStatus();
}

absl::StatusOr<DevicePreset> ParsePresetSpec(absl::string_view spec) {
  std::vector<std::pair<std::string, std::string>> items;
  if (absl::ConsumePrefix(&spec, "@")) {
    const std::string path(spec);
    std::ifstream f(path);
    if (!f) return absl::NotFoundError(absl::StrCat("cannot read preset file \"", path, "\""));
    std::string base = "ascend910", line;
    for (int n = 1; std::getline(f, line); ++n) {
      const std::string content = line.substr(0, line.find('#'));
      absl::string_view l = absl::StripAsciiWhitespace(content);
      if (l.empty()) continue;
      auto kv = SplitItem(l, absl::StrCat(path, ":", n));
      if (!kv.ok()) return kv.status();
      if (kv->first == "base") base = kv->second;
      items.push_back(*std::move(kv));
    }
    auto preset = FromItems(items, base, "custom");
    if (!preset.ok()) return absl::Status(preset.status().code(), absl::StrCat(path, ": ", preset.status().message()));
    return preset;
  }
  std::vector<absl::string_view> parts = absl::StrSplit(spec, ',');
  const std::string base(absl::StripAsciiWhitespace(parts[0]));
  if (parts.size() == 1) return PresetByName(base);
  for (size_t i = 1; i < parts.size(); ++i) {
    auto kv = SplitItem(parts[i], "--preset");
    if (!kv.ok()) return kv.status();
    items.push_back(*std::move(kv));
  }
  return FromItems(items, base, absl::StrCat(base, "-custom"));
}

}  // namespace npu::device
