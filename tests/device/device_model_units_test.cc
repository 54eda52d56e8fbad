// The device model's building blocks (the L2: l2_model_test.cc): the
// presets (known, overridden, from a file) and the CPU list of --cpu-affinity.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/device/cost_model.h"
#include "server/device/cpu_affinity.h"
#include "server/device/device_preset.h"

namespace npu::device {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(PresetTest, KnownPresetsAreValidAndMatchTheirPublishedPeaks) {
  for (const std::string& name : PresetNames()) {
    auto p = PresetByName(name);
    ASSERT_TRUE(p.ok()) << name;
    EXPECT_TRUE(ValidatePreset(*p).ok()) << name << ": " << ValidatePreset(*p).message();
    EXPECT_GT(p->l2_bytes, 0u) << name;
  }
  // Ascend 910: 256 TFLOPS fp16 (Hot Chips 31); the derived 1 GHz clock gives 262.
  EXPECT_NEAR(PresetByName("ascend910")->peak_fp16_flops() / 1e12, 256, 256 * 0.03);
  // Ascend 310: 8 TFLOPS fp16 (HiSilicon).
  EXPECT_NEAR(PresetByName("ascend310")->peak_fp16_flops() / 1e12, 8, 8 * 0.03);
  EXPECT_TRUE(PresetByName("ascend910b")->separated());
}

TEST(PresetTest, SpecOverridesFields) {
  auto p = ParsePresetSpec("ascend910, cube_cores=8 ,clock_hz=1.5e9,hbm_bytes_per_s=2e12");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->name, "ascend910-custom");
  EXPECT_EQ(p->cube_cores, 8);
  EXPECT_DOUBLE_EQ(p->clock_hz, 1.5e9);
  EXPECT_DOUBLE_EQ(p->hbm_bytes_per_s, 2e12);
  EXPECT_EQ(p->l1_bytes, PresetByName("ascend910")->l1_bytes);  // the rest kept
  EXPECT_EQ(ParsePresetSpec("ascend310")->name, "ascend310");
}

TEST(PresetTest, SpecFileStartsFromItsBase) {
  const std::string path = ::testing::TempDir() + "/chip.preset";
  std::ofstream(path) << "# a small chip\nbase = ascend910b\nname=tiny\nvector_cores=4 # two per cube core\n"
                         "cube_cores=2\nub_bytes=131072\n";
  auto p = ParsePresetSpec("@" + path);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->name, "tiny");
  EXPECT_EQ(p->cube_cores, 2);
  EXPECT_EQ(p->vector_cores, 4);
  EXPECT_EQ(p->ub_bytes, 131072u);
  EXPECT_DOUBLE_EQ(p->clock_hz, PresetByName("ascend910b")->clock_hz);
  std::remove(path.c_str());
}

TEST(PresetTest, BadSpecsNameTheirFault) {
  EXPECT_THAT(ParsePresetSpec("ascend911").status().message(), HasSubstr("unknown device preset"));
  EXPECT_THAT(ParsePresetSpec("ascend910,cores=4").status().message(), HasSubstr("unknown preset field \"cores\""));
  EXPECT_THAT(ParsePresetSpec("ascend910,cube_cores=many").status().message(), HasSubstr("cube_cores"));
  EXPECT_THAT(ParsePresetSpec("ascend910,cube_cores=0").status().message(), HasSubstr("cube_cores must be"));
  EXPECT_THAT(ParsePresetSpec("ascend910,l0c_bytes=512").status().message(), HasSubstr("l0c_bytes"));
  EXPECT_THAT(ParsePresetSpec("ascend910,ub_bytes").status().message(), HasSubstr("key=value"));
  EXPECT_EQ(ParsePresetSpec("@/nonexistent/chip.preset").status().code(), absl::StatusCode::kNotFound);
}

TEST(CpuListTest, ParsesTasksetStyleLists) {
  EXPECT_THAT(*ParseCpuList("0-1"), ElementsAre(0, 1));
  EXPECT_THAT(*ParseCpuList("0,2"), ElementsAre(0, 2));
  EXPECT_THAT(*ParseCpuList(" 3, 0-1 "), ElementsAre(3, 0, 1));
  EXPECT_TRUE(ParseCpuList("")->empty());
  for (const char* bad : {"a", "1-", "-1", "2-1", "0,0", "0-1-2", "99999", "1,,2"}) {
    EXPECT_FALSE(ParseCpuList(bad).ok()) << bad;
  }
  EXPECT_TRUE(CheckCpusAllowed(*ParseCpuList("0")).ok());
  EXPECT_FALSE(CheckCpusAllowed({CPU_SETSIZE - 1}).ok());
}

TEST(CpuListTest, PinsAnOpenMpTeam) {
  // On this worker-like thread: two threads pinned to CPU 0 (always present).
  std::thread worker([] { EXPECT_TRUE(PinOpenMpTeam({0}, 2).ok()); });
  worker.join();
}

TEST(CostTileTest, DoubleBufferingOverlapsUnits) {
  const DevicePreset p = *PresetByName("ascend910");
  TileWork w;
  w.cube_fractals = 3000;
  w.mte2_bytes = 64000;     // 40,000 from HBM at gm_bytes_per_cycle, 24,000 L2 hits at l2_bytes_per_cycle
  w.fixpipe_bytes = 25600;  // at fixpipe_bytes_per_cycle
  w.mte1_a_bytes = 51200;
  w.mte1_b_bytes = 25600;
  w.l0c_to_ub_bytes = 12800;
  w.pipeline_steps = 10;
  const TileCost c = CostTile(w, p, 24000);
  const uint64_t mte2 = static_cast<uint64_t>(std::ceil(40000 / p.gm_bytes_per_cycle)) +
                        static_cast<uint64_t>(std::ceil(24000 / p.l2_bytes_per_cycle));
  const uint64_t fixpipe = static_cast<uint64_t>(std::ceil(25600 / p.fixpipe_bytes_per_cycle));
  EXPECT_EQ(c.busy.cube, 3000u);
  EXPECT_EQ(c.busy.mte2, mte2);
  EXPECT_EQ(c.busy.fixpipe, fixpipe);
  EXPECT_EQ(c.busy.mte1, static_cast<uint64_t>(51200 / p.mte1_a_bytes_per_cycle + 25600 / p.mte1_b_bytes_per_cycle));
  EXPECT_EQ(c.busy.vector, static_cast<uint64_t>(std::ceil(12800 / p.l0c_to_ub_bytes_per_cycle)));
  EXPECT_EQ(c.busy.scalar, kScalarCyclesPerTile);
  // block start + slowest unit (the Cube) + fill + drain
  EXPECT_EQ(c.duration, p.block_start_cycles + 3000u + mte2 / 10 + fixpipe / 10);
  const UnitCycles stretched = StretchTransfers(c, 2 * c.duration);
  EXPECT_EQ(stretched.cube, 3000u);
  EXPECT_EQ(stretched.mte2, 2 * mte2);
  EXPECT_LE(stretched.mte2, 2 * c.duration);
}

}  // namespace
}  // namespace npu::device
