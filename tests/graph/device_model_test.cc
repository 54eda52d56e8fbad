// The device model on op work built by the same code the ops run (the
// kernel's per-tile counting, the vector tiler), scheduled without computing
// anything: closed-form cases against the presets' peaks and bandwidths, and
// the invariants every scheduled op keeps. Cycles are modeled.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "tests/graph/model_work.h"
#include "server/device/core_pool.h"
#include "server/device/device_preset.h"
#include "server/graph/cube_tiling.h"
#include "server/graph/vector_tiling.h"

namespace npu::graph {
namespace {

using device::CorePool;
using device::DevicePreset;
using device::OpWork;
using device::ScheduledOp;

using testing::GemmWork;
using testing::Preset;

// The work an elementwise fp16 Add over `elements` outputs records (fp16 lanes, 3 UB operands).
OpWork AddWork(int64_t elements, const DevicePreset& preset) {
  return ElementwiseOpWork(elements, /*in_elem_bytes=*/4, /*out_elem_bytes=*/2, /*lane_bytes=*/2, /*operands=*/3,
                           /*passes=*/1, preset);
}

uint64_t Span(const ScheduledOp& op) { return op.end - op.start; }

// Invariants of one scheduled op (see docs/device-model.md).
void ExpectInvariants(const DevicePreset& preset, const OpWork& work, const ScheduledOp& op, size_t eligible) {
  ASSERT_EQ(op.tiles.size(), work.tiles.size());
  ASSERT_GE(op.block_dim, 1);
  EXPECT_LE(static_cast<size_t>(op.block_dim), eligible);
  const uint64_t span = Span(op);
  ASSERT_GT(span, 0u);
  // Totals add up, each unit is busy no longer than its tile, tiles on a core never overlap.
  device::UnitCycles sum;
  std::map<int, std::vector<std::pair<uint64_t, uint64_t>>> per_core;
  uint64_t fractals = 0;
  for (size_t i = 0; i < op.tiles.size(); ++i) {
    const auto& t = op.tiles[i];
    ASSERT_GE(t.end, t.start);
    EXPECT_LE(t.busy.Max(), t.end - t.start) << "tile " << i;
    EXPECT_GE(t.start, op.start);
    EXPECT_LE(t.end, op.end);
    sum += t.busy;
    per_core[t.core].push_back({t.start, t.end});
    fractals += work.tiles[i].cube_fractals;
  }
  EXPECT_EQ(sum.cube, op.busy.cube);
  EXPECT_EQ(sum.vector, op.busy.vector);
  EXPECT_EQ(sum.mte2, op.busy.mte2);
  EXPECT_EQ(sum.scalar, op.busy.scalar);
  for (auto& [core, spans] : per_core) {
    std::sort(spans.begin(), spans.end());
    for (size_t i = 1; i < spans.size(); ++i) EXPECT_GE(spans[i].first, spans[i - 1].second) << "core " << core;
  }
  // Utilisation <= 100% of block_dim cores over the op's span.
  const double capacity = static_cast<double>(span) * op.block_dim;
  for (uint64_t busy : {sum.cube, sum.vector, sum.scalar, sum.mte1, sum.mte2, sum.mte3, sum.fixpipe}) {
    EXPECT_LE(static_cast<double>(busy), capacity);
  }
  // Roofline: compute within the chip's peak, HBM traffic within its bandwidth
  // (one cycle of rounding per tile end).
  const double seconds = static_cast<double>(span) / preset.clock_hz;
  EXPECT_LE(fractals * 4096.0 * 2.0 / seconds, preset.peak_fp16_flops() * (1 + 1e-9));
  const double hbm_per_cycle = preset.hbm_bytes_per_s / preset.clock_hz;
  EXPECT_LE(static_cast<double>(op.hbm_bytes),
            hbm_per_cycle * static_cast<double>(span + 1));
}

double GemmFractionOfPeak(int64_t m, int64_t n, int64_t k, const DevicePreset& preset, ScheduledOp* out = nullptr) {
  const OpWork work = GemmWork(m, n, k, preset);
  CorePool pool(preset);
  const ScheduledOp op = pool.Schedule(work, 0);
  ExpectInvariants(preset, work, op, static_cast<size_t>(preset.cube_cores));
  if (out) *out = op;
  const double seconds = static_cast<double>(Span(op)) / preset.clock_hz;
  return 2.0 * m * n * k / seconds / preset.peak_fp16_flops();
}

TEST(DeviceModelTest, Gemm4096OnAscend910IsNearPeak) {
  ScheduledOp op;
  const double fraction = GemmFractionOfPeak(4096, 4096, 4096, Preset("ascend910"), &op);
  std::printf("4096^3 fp16 GEMM on ascend910: %.1f%% of peak, %llu cycles, HBM %.0f MiB, L2 hits %.0f MiB\n",
              100 * fraction, static_cast<unsigned long long>(Span(op)), op.hbm_bytes / 1048576.0,
              op.l2_hit_bytes / 1048576.0);
  EXPECT_GE(fraction, 0.80);
  EXPECT_LE(fraction, 1.00);
  EXPECT_GT(op.l2_hit_bytes, 0u);  // panels shared by the cores of a wave come from L2
}

TEST(DeviceModelTest, WithoutL2TheSameGemmIsMemoryBound) {
  // The reason the L2 is modeled: every tile fetching its own 4 MiB of panels
  // from HBM would need ~2 TB/s on 32 cores.
  DevicePreset preset = Preset("ascend910");
  preset.l2_bytes = 0;
  const double fraction = GemmFractionOfPeak(4096, 4096, 4096, preset);
  std::printf("4096^3 fp16 GEMM on ascend910 without L2: %.1f%% of peak\n", 100 * fraction);
  EXPECT_LT(fraction, 0.75);
}

TEST(DeviceModelTest, OneGibAddIsBoundByHbm) {
  const DevicePreset preset = Preset("ascend910");
  const int64_t elements = (int64_t{1} << 30) / 2;  // 1 GiB per fp16 operand
  const OpWork work = AddWork(elements, preset);
  CorePool pool(preset);
  const ScheduledOp op = pool.Schedule(work, 0);
  ExpectInvariants(preset, work, op, static_cast<size_t>(preset.vector_unit_cores()));
  const double bytes = 3.0 * (int64_t{1} << 30);  // two inputs read, one output written
  const double bound_cycles = bytes / (preset.hbm_bytes_per_s / preset.clock_hz);
  std::printf("1 GiB fp16 Add on ascend910: %llu cycles, bytes/bandwidth %.0f cycles (ratio %.3f)\n",
              static_cast<unsigned long long>(Span(op)), bound_cycles, Span(op) / bound_cycles);
  EXPECT_EQ(static_cast<double>(op.hbm_bytes), bytes);
  EXPECT_NEAR(static_cast<double>(Span(op)) / bound_cycles, 1.0, 0.10);
}

// The closed form of a streaming op: it takes the longer of moving its bytes
// through HBM and its Vector work on all vector cores, never less, and with
// fair sharing no more than a few percent beyond.
TEST(DeviceModelTest, StreamingOpsTakeTheLongerOfTheirMemoryAndVectorBounds) {
  const DevicePreset preset = Preset("ascend910");
  const int64_t elements = int64_t{64} << 20;  // 128 MiB of fp16 in, 128 MiB out
  for (int64_t passes : {1, 6, 10, 14, 20}) {
    const OpWork work = ElementwiseOpWork(elements, 2, 2, /*lane_bytes=*/2, /*operands=*/2, passes, preset);
    CorePool pool(preset);
    const ScheduledOp op = pool.Schedule(work, 0);
    ExpectInvariants(preset, work, op, static_cast<size_t>(preset.vector_unit_cores()));
    const double memory = 4.0 * elements / (preset.hbm_bytes_per_s / preset.clock_hz);
    const double vector = std::ceil(elements * 2.0 / 256) * passes / preset.vector_unit_cores();
    const double bound = std::max(memory, vector);
    std::printf("%lld-pass unary over %lld fp16 on ascend910: %llu cycles, memory bound %.0f, vector bound %.0f\n",
                static_cast<long long>(passes), static_cast<long long>(elements),
                static_cast<unsigned long long>(Span(op)), memory, vector);
    EXPECT_GE(static_cast<double>(Span(op)), bound * (1 - 1e-9)) << passes;
    EXPECT_LE(static_cast<double>(Span(op)), bound * 1.10) << passes;
  }
}

TEST(DeviceModelTest, SkinnyGemmStreamsItsWeightsAtTheHbmBandwidth) {
  // 16 x 8192 x 8192: the 128 MiB of B are read once; the Cube is idle most of
  // the time, so the op takes B's bytes / bandwidth, within 10%.
  const DevicePreset preset = Preset("ascend910");
  ScheduledOp op;
  GemmFractionOfPeak(16, 8192, 8192, preset, &op);
  const double bound = 8192.0 * 8192 * 2 / (preset.hbm_bytes_per_s / preset.clock_hz);
  std::printf("16x8192x8192 GEMM on ascend910: %llu cycles, B bytes / bandwidth %.0f\n",
              static_cast<unsigned long long>(Span(op)), bound);
  EXPECT_GE(static_cast<double>(Span(op)), bound * (1 - 1e-9));
  EXPECT_LE(static_cast<double>(Span(op)), bound * 1.10);
}

TEST(DeviceModelTest, LargeGemmScalesWithCoreCount) {
  // Same GEMM, same per-core Cube: the modeled cycles differ by the core count
  // (the 310's 0.5 GHz clock adds its own factor to the time, not the cycles).
  const DevicePreset a310 = Preset("ascend310"), a910 = Preset("ascend910");
  const double cores = static_cast<double>(a910.cube_cores) / a310.cube_cores;
  for (auto [m, n, k] : {std::tuple{4096, 4096, 4096}, std::tuple{16384, 512, 4096}}) {
    ScheduledOp op310, op910;
    const double f310 = GemmFractionOfPeak(m, n, k, a310, &op310);
    const double f910 = GemmFractionOfPeak(m, n, k, a910, &op910);
    const double ratio = static_cast<double>(Span(op310)) / static_cast<double>(Span(op910));
    std::printf("%dx%dx%d GEMM: ascend310 %.1f%% / ascend910 %.1f%% of peak, cycle ratio %.2f (cores %.0f)\n", m, n,
                k, 100 * f310, 100 * f910, ratio, cores);
    EXPECT_NEAR(ratio / cores, 1.0, 0.15) << m << "x" << n << "x" << k;
  }
}

TEST(DeviceModelTest, IndependentOpsOverlapAndDependentOnesQueue) {
  const DevicePreset preset = Preset("ascend910");
  OpWork small;  // 4 compute-only tiles of 20,000 Vector cycles: leaves 28 cores free
  small.task_type = device::TaskType::kAiVectorCore;
  device::TileWork tile;
  tile.vector_repeats = 20000;
  small.tiles.assign(4, tile);
  CorePool pool(preset);
  const ScheduledOp a = pool.Schedule(small, 0);
  const ScheduledOp b = pool.Schedule(small, 0);  // independent: same ready cycle, other cores
  EXPECT_LT(b.start, a.end);
  // The Task Scheduler issues one task per task_gap_ns.
  EXPECT_EQ(b.dispatch - a.dispatch, preset.CyclesOfNs(preset.task_gap_ns));
  EXPECT_EQ(a.start - a.dispatch, preset.CyclesOfNs(preset.task_launch_ns));
  EXPECT_EQ(a.complete - a.end, preset.CyclesOfNs(preset.task_finish_ns));
  const ScheduledOp c = pool.Schedule(small, std::max(a.complete, b.complete));  // depends on both
  EXPECT_GE(c.start, std::max(a.complete, b.complete));
}

TEST(DeviceModelTest, SchedulesAreDeterministic) {
  const DevicePreset preset = Preset("ascend910b");
  auto run = [&] {
    CorePool pool(preset);
    std::vector<uint64_t> ends;
    for (int i = 0; i < 3; ++i) {
      ends.push_back(pool.Schedule(GemmWork(1000, 700, 300, preset), 0).end);
      ends.push_back(pool.Schedule(AddWork(3'000'000, preset), 0).end);
    }
    return ends;
  };
  EXPECT_EQ(run(), run());
}

TEST(DeviceModelTest, InvariantsHoldAcrossPresetsAndShapes) {
  for (const char* name : {"ascend310", "ascend910", "ascend910b"}) {
    const DevicePreset preset = Preset(name);
    CorePool pool(preset);
    for (auto [m, n, k] : {std::tuple{1, 1, 1}, std::tuple{17, 33, 65}, std::tuple{512, 768, 3072},
                           std::tuple{2048, 64, 128}}) {
      const OpWork work = GemmWork(m, n, k, preset);
      ExpectInvariants(preset, work, pool.Schedule(work, pool.horizon()), static_cast<size_t>(preset.cube_cores));
    }
    for (int64_t elements : {int64_t{1}, int64_t{1000}, int64_t{10'000'000}}) {
      const OpWork work = AddWork(elements, preset);
      ExpectInvariants(preset, work, pool.Schedule(work, pool.horizon()),
                       static_cast<size_t>(preset.vector_unit_cores()));
    }
  }
}

TEST(VectorTilingTest, ChunksThatDoNotFitUbAreRefused) {
  const DevicePreset preset = Preset("ascend910");
  EXPECT_TRUE(CheckVectorTilingFits(PlanVectorTiles(1 << 20, 12, preset), preset).ok());
  const VectorTiling huge = PlanVectorTiles(1 << 20, 4096, preset);  // 4 KiB of UB per element
  EXPECT_EQ(CheckVectorTilingFits(huge, preset).code(), absl::StatusCode::kFailedPrecondition);
}

TEST(CubeTilingTest, TilesThatDoNotFitAreRefused) {
  const DevicePreset preset = Preset("ascend910b");
  EXPECT_TRUE(CheckCubeTileFits(CubeTileForPreset(preset), preset).ok());
  const absl::Status s = CheckCubeTileFits({256, 256, 512}, preset);  // 256 KiB of L0C on a 128 KiB chip
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace npu::graph
