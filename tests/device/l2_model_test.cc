// The chip's L2 across ops (l2_cache.h, l2_traffic.h): every GM access of an
// op whose tensors have device addresses goes through one LRU L2 per chip,
// write-allocate, dirty data written back to HBM when evicted. References
// are closed forms: tensor bytes, the presets' L2 and HBM bandwidths.
#include <algorithm>
#include <cstdio>
#include <vector>

#include "gtest/gtest.h"
#include "server/device/core_pool.h"
#include "server/device/device_preset.h"
#include "server/device/l2_cache.h"

namespace npu::device {
namespace {

constexpr uint64_t MiB = uint64_t{1} << 20;

DevicePreset Preset(const char* name) { return *PresetByName(name); }

TEST(L2CacheTest, ReadsMissThenHitAndLeastRecentlyUsedIsEvicted) {
  L2Cache l2(300);
  const uint64_t s = FreshSpace(1);
  EXPECT_EQ(l2.Read({s, 0, 100}).miss_bytes, 100u);
  EXPECT_EQ(l2.Read({s, 100, 100}).miss_bytes, 100u);
  EXPECT_EQ(l2.Read({s, 200, 100}).miss_bytes, 100u);
  EXPECT_EQ(l2.Read({s, 0, 100}).hit_bytes, 100u);  // [0, 100) is now the most recent
  EXPECT_EQ(l2.Read({s, 300, 100}).miss_bytes, 100u);  // evicts [100, 200)
  const L2Access a = l2.Read({s, 50, 200});  // [50, 100) and [200, 250) resident
  EXPECT_EQ(a.hit_bytes, 100u);
  EXPECT_EQ(a.miss_bytes, 100u);
  EXPECT_EQ(a.written_back_bytes, 0u);  // nothing was dirty
  EXPECT_LE(l2.used_bytes(), 300u);
  EXPECT_EQ(l2.ResidentBytes({FreshSpace(2), 0, 100}), 0u);  // another space never aliases
}

TEST(L2CacheTest, WritesAllocateDirtyAndAreWrittenBackWhenEvicted) {
  L2Cache l2(256);
  const uint64_t s = FreshSpace(1);
  const L2Access w = l2.Write({s, 0, 128});
  EXPECT_EQ(w.hit_bytes + w.miss_bytes, 0u);  // nothing fetched
  EXPECT_EQ(l2.dirty_bytes(), 128u);
  EXPECT_EQ(l2.Read({s, 0, 128}).hit_bytes, 128u);  // the next op reads it from the L2
  EXPECT_EQ(l2.Write({s, 0, 128}).written_back_bytes, 0u);  // overwriting a dirty range writes nothing back
  EXPECT_EQ(l2.Read({s, 128, 128}).miss_bytes, 128u);
  // 64 more bytes evict the oldest 64: the dirty range's first bytes.
  EXPECT_EQ(l2.Read({s, 256, 64}).written_back_bytes, 64u);
  EXPECT_EQ(l2.dirty_bytes(), 64u);
  EXPECT_EQ(l2.used_bytes(), 256u);
}

TEST(L2CacheTest, ADiscardedRangeIsFetchedAgain) {
  L2Cache l2(1000);
  const uint64_t s = FreshSpace(1);
  l2.Write({s, 0, 300});
  l2.Discard({s, 100, 100});  // a DMA past the L2 overwrote the middle
  EXPECT_EQ(l2.dirty_bytes(), 200u);
  const L2Access a = l2.Read({s, 0, 300});
  EXPECT_EQ(a.hit_bytes, 200u);
  EXPECT_EQ(a.miss_bytes, 100u);
}

// A stream read piece by piece is one range, and evicting it takes its front
// first, as it would the pieces oldest first.
TEST(L2CacheTest, AStreamReadInPiecesIsOneRangeEvictedFrontFirst) {
  L2Cache l2(300);
  const uint64_t s = FreshSpace(1);
  for (uint64_t at = 0; at < 200; at += 50) EXPECT_EQ(l2.Read({s, at, 50}).miss_bytes, 50u);
  EXPECT_EQ(l2.regions(), 1u);
  l2.Write({s, 1000, 150});  // 50 bytes over: the stream's oldest 50 go
  EXPECT_EQ(l2.ResidentBytes({s, 0, 50}), 0u);
  EXPECT_EQ(l2.ResidentBytes({s, 50, 150}), 150u);
  // A hit in the middle makes it the most recent: the next eviction takes
  // what lies before it, then after it, then it.
  EXPECT_EQ(l2.Read({s, 100, 50}).hit_bytes, 50u);
  l2.Read({s, 2000, 100});
  EXPECT_EQ(l2.ResidentBytes({s, 50, 50}), 0u);
  EXPECT_EQ(l2.ResidentBytes({s, 150, 50}), 0u);
  EXPECT_EQ(l2.ResidentBytes({s, 100, 50}), 50u);
  EXPECT_EQ(l2.dirty_bytes(), 150u);  // the write is younger than the evicted reads
}

// An AI CPU op's result does not pass the L2: a later read of its range misses.
TEST(L2ModelTest, WorkOffTheAiCoresLeavesNoStaleData) {
  const DevicePreset p = Preset("ascend910b");
  CorePool pool(p);
  const AddressRange y{kRunArenaSpace, 0, 4096};
  OpWork writer;
  TileWork t;
  t.mte3_bytes = 4096;
  writer.tiles = {t};
  writer.writes = {y};
  pool.Schedule(writer, 0);
  EXPECT_EQ(pool.l2().ResidentBytes(y), 4096u);
  OpWork cpu;
  cpu.task_type = TaskType::kAiCpu;
  cpu.writes = {y};
  pool.Schedule(cpu, 0);
  EXPECT_EQ(pool.l2().ResidentBytes(y), 0u);
}

TEST(L2CacheTest, ARangeLargerThanTheCacheKeepsItsLastBytes) {
  L2Cache l2(1000);
  const uint64_t s = FreshSpace(1);
  const L2Access w = l2.Write({s, 0, 3000});
  EXPECT_EQ(w.written_back_bytes, 2000u);  // streamed through: all but what stays
  EXPECT_EQ(l2.ResidentBytes({s, 2000, 1000}), 1000u);
  EXPECT_EQ(l2.ResidentBytes({s, 0, 2000}), 0u);
}

TEST(L2CacheTest, KeepsAtMostItsRegionBoundHowEverSmallTheRanges) {
  L2Cache l2(uint64_t{1} << 30);
  const uint64_t s = FreshSpace(1);
  // Every other 64 bytes: ranges that never merge.
  for (uint64_t i = 0; i < L2Cache::kMaxRegions + 10; ++i) l2.Write({s, i * 128, 64});
  EXPECT_EQ(l2.regions(), L2Cache::kMaxRegions);
  EXPECT_EQ(l2.ResidentBytes({s, 0, 10 * 128}), 0u);  // the oldest went
  EXPECT_EQ(l2.Read({s, 10 * 128, 64}).hit_bytes, 64u);
  EXPECT_EQ(l2.dirty_bytes(), L2Cache::kMaxRegions * 64);
}

// One elementwise fp16 op over `bytes` per operand, reading `in` and writing
// `out`, split over the chip's vector cores in 64 steps per tile, as the
// Vector ops count it (vector_tiling.h): each byte read once, written once.
OpWork Elementwise(const DevicePreset& p, uint64_t bytes, const AddressRange& in, const AddressRange& out,
                   uint64_t written = UINT64_MAX) {
  if (written == UINT64_MAX) written = bytes;
  OpWork w;
  w.task_type = TaskType::kAiVectorCore;
  const uint64_t tiles = static_cast<uint64_t>(p.vector_unit_cores());
  for (uint64_t t = 0; t < tiles; ++t) {
    TileWork tile;
    tile.mte2_bytes = bytes * (t + 1) / tiles - bytes * t / tiles;
    tile.mte3_bytes = written * (t + 1) / tiles - written * t / tiles;
    tile.vector_repeats = tile.mte2_bytes / 256;
    tile.vector_instructions = tile.vector_repeats / 255 + 1;
    tile.pipeline_steps = 64;
    w.tiles.push_back(tile);
  }
  if (in.space != 0) w.reads = {in};
  if (out.space != 0) w.writes = {out};
  return w;
}

struct ChainResult {
  std::vector<ScheduledOp> ops;
  uint64_t hbm = 0, hits = 0, dirty_left = 0, cycles = 0;
};

// `n` ops in a chain on `pool`: x (a fresh input) -> y1 -> ... -> yn, the
// intermediates alternating between two arena ranges as the arena planner
// places them, the last one a result (a fresh space). `addressed` false
// schedules the same work without addresses (model v3: no L2 across ops).
ChainResult Chain(CorePool& pool, const DevicePreset& p, uint64_t bytes, int n, bool addressed = true) {
  ChainResult r;
  const uint64_t run = pool.NextFreshSpace();
  AddressRange value = {run, 0, bytes};  // the input
  uint64_t ready = 0;
  for (int k = 1; k <= n; ++k) {
    const AddressRange next = k == n ? AddressRange{run, bytes, bytes}
                                     : AddressRange{kRunArenaSpace, (k % 2) * bytes, bytes};
    const OpWork w = addressed ? Elementwise(p, bytes, value, next) : Elementwise(p, bytes, {}, {});
    r.ops.push_back(pool.Schedule(w, ready));
    ready = r.ops.back().complete;
    r.hbm += r.ops.back().hbm_bytes;
    r.hits += r.ops.back().l2_hit_bytes;
    value = next;
  }
  r.cycles = r.ops.back().complete - r.ops.front().dispatch;
  r.dirty_left = pool.l2().dirty_bytes();
  return r;
}

TEST(L2ModelTest, AChainWhoseTensorsFitTheL2ReadsHbmOnceOn910B) {
  const DevicePreset p = Preset("ascend910b");  // 192 MiB L2
  const uint64_t bytes = 16 * MiB;
  CorePool pool(p);
  const ChainResult r = Chain(pool, p, bytes, 8);
  // Op 1 fetches the input; every later op reads what the one before wrote,
  // from the L2. Every write stays resident (x, two arena ranges and the
  // result: 64 MiB), so nothing is written back: HBM sees the input only.
  EXPECT_EQ(r.ops[0].hbm_bytes, bytes);
  EXPECT_EQ(r.ops[0].l2_hit_bytes, 0u);
  for (size_t k = 1; k < r.ops.size(); ++k) {
    EXPECT_EQ(r.ops[k].hbm_bytes, 0u) << "op " << k;
    EXPECT_EQ(r.ops[k].l2_hit_bytes, bytes) << "op " << k;
  }
  for (const ScheduledOp& op : r.ops) EXPECT_EQ(op.l2_write_bytes, bytes);
  EXPECT_EQ(r.hbm, bytes);
  EXPECT_EQ(r.dirty_left, 3 * bytes);  // two arena ranges and the result; no flush at the end

  CorePool v3(p);
  const ChainResult before = Chain(v3, p, bytes, 8, /*addressed=*/false);
  EXPECT_EQ(before.hbm, 8 * 2 * bytes);  // without addresses every read and write goes to HBM
  std::printf("8 x 16 MiB fp16 chain on ascend910b: HBM %.0f MiB, L2 hits %.0f MiB, %llu cycles "
              "(unaddressed, as model v3: HBM %.0f MiB, %llu cycles)\n",
              static_cast<double>(r.hbm) / MiB, static_cast<double>(r.hits) / MiB,
              static_cast<unsigned long long>(r.cycles), static_cast<double>(before.hbm) / MiB,
              static_cast<unsigned long long>(before.cycles));
  EXPECT_LT(r.cycles, before.cycles);
}

TEST(L2ModelTest, AChainLargerThanTheL2MissesOn910) {
  const DevicePreset p = Preset("ascend910");  // 32 MiB L2
  const uint64_t bytes = 64 * MiB;
  CorePool pool(p);
  const ChainResult r = Chain(pool, p, bytes, 8);
  // LRU over a tensor twice the L2: what an op leaves resident is the end of
  // its streams, evicted by the next op's first reads before it gets there.
  for (size_t k = 0; k < r.ops.size(); ++k) EXPECT_EQ(r.ops[k].l2_hit_bytes, 0u) << "op " << k;
  // Conservation: every byte read came from HBM, every byte written reached
  // HBM except what is still dirty in the L2 (no more than the L2 holds).
  EXPECT_EQ(r.hbm + r.dirty_left, 8 * 2 * bytes);
  EXPECT_GT(r.dirty_left, 0u);
  EXPECT_LE(r.dirty_left, p.l2_bytes);
  std::printf("8 x 64 MiB fp16 chain on ascend910: HBM %.0f MiB, L2 hits %.0f MiB, %.0f MiB dirty left\n",
              static_cast<double>(r.hbm) / MiB, static_cast<double>(r.hits) / MiB,
              static_cast<double>(r.dirty_left) / MiB);
}

// A reduction reads a 16 MiB tensor and writes almost nothing: memory-bound on
// the read. Resident, it takes the longer of the tensor's bytes over the
// chip's L2 bandwidth and a tile's share over its core's L2 rate (plus its
// block start); fetched, the same with the HBM rates.
double SpanOfRead(const DevicePreset& p, uint64_t bytes, bool resident) {
  CorePool pool(p);
  const AddressRange x{pool.NextFreshSpace(), 0, bytes}, y{kRunArenaSpace, 0, bytes};
  uint64_t ready = 0;
  if (resident) ready = pool.Schedule(Elementwise(p, bytes, x, y), 0).complete;
  const ScheduledOp op = pool.Schedule(Elementwise(p, bytes, resident ? y : x, {kRunArenaSpace, bytes, 64}, 64), ready);
  EXPECT_EQ(op.l2_hit_bytes, resident ? bytes : 0u);
  EXPECT_EQ(op.hbm_bytes, resident ? 0u : bytes);
  uint64_t start = UINT64_MAX;
  for (const TilePlacement& t : op.tiles) start = std::min(start, t.start);
  return static_cast<double>(op.end - start);
}

double ReadBound(const DevicePreset& p, uint64_t bytes, double chip_bytes_per_s, double core_bytes_per_cycle) {
  const double cores = p.vector_unit_cores();
  return std::max(static_cast<double>(bytes) / (chip_bytes_per_s / p.clock_hz),
                  static_cast<double>(p.block_start_cycles) + static_cast<double>(bytes) / cores / core_bytes_per_cycle);
}

TEST(L2ModelTest, AResidentReadFollowsTheL2Bandwidth) {
  const uint64_t bytes = 16 * MiB;
  DevicePreset p = Preset("ascend910b");
  // The 910B's own rates (a tile's share at its core's L2 rate is the longer),
  // and an L2 at half its bandwidth (the chip's L2 bandwidth is the longer).
  for (double l2_per_s : {p.l2_bytes_per_s, p.l2_bytes_per_s / 2}) {
    p.l2_bytes_per_s = l2_per_s;
    const double l2_bound = ReadBound(p, bytes, p.l2_bytes_per_s, p.l2_bytes_per_cycle);
    const double hbm_bound = ReadBound(p, bytes, p.hbm_bytes_per_s, p.gm_bytes_per_cycle);
    const double resident = SpanOfRead(p, bytes, true), fetched = SpanOfRead(p, bytes, false);
    std::printf("16 MiB read on ascend910b, L2 at %.1f TB/s: resident %.0f cycles (L2 bound %.0f), "
                "fetched %.0f (HBM bound %.0f)\n",
                l2_per_s / 1e12, resident, l2_bound, fetched, hbm_bound);
    EXPECT_GE(resident, l2_bound * 0.999);
    EXPECT_NEAR(resident / l2_bound, 1.0, 0.05);
    EXPECT_GE(fetched, hbm_bound * 0.999);
    EXPECT_NEAR(fetched / hbm_bound, 1.0, 0.05);
  }
}

TEST(L2ModelTest, TheSameSequenceGivesTheSameCyclesOnAFreshDevice) {
  const DevicePreset p = Preset("ascend910");
  CorePool a(p), b(p);
  const ChainResult ra = Chain(a, p, 48 * MiB, 6), rb = Chain(b, p, 48 * MiB, 6);
  ASSERT_EQ(ra.ops.size(), rb.ops.size());
  for (size_t k = 0; k < ra.ops.size(); ++k) {
    EXPECT_EQ(ra.ops[k].end, rb.ops[k].end);
    EXPECT_EQ(ra.ops[k].hbm_bytes, rb.ops[k].hbm_bytes);
    EXPECT_EQ(ra.ops[k].l2_hit_bytes, rb.ops[k].l2_hit_bytes);
  }
  // The device's L2 persists: a second run of the chain on `a` finds the
  // arena ranges resident but its fresh input is not, so op 1 misses again.
  const ChainResult again = Chain(a, p, 48 * MiB, 6);
  EXPECT_EQ(again.ops[0].l2_hit_bytes, 0u);
}

// A GEMM after the op that wrote its A operand: A's panels hit from the first
// read, so HBM sees B only (every panel of a 1024^3 GEMM fits the 910B's L2).
TEST(L2ModelTest, AGemmReadsAnOperandTheOpBeforeLeftInTheL2) {
  const DevicePreset p = Preset("ascend910b");
  const uint64_t m = 1024, bytes = m * m * 2;
  // 1024^3 as 8 x 8 tiles of 128 x 128 over K in 16 steps: A row panel i, B column panel j.
  auto gemm = [&](const AddressRange& a, const AddressRange& b, const AddressRange& c) {
    OpWork w;
    w.task_type = TaskType::kAiCore;
    for (uint64_t i = 0; i < 8; ++i) {
      for (uint64_t j = 0; j < 8; ++j) {
        TileWork t;
        t.cube_fractals = 8 * 8 * 64;
        t.mte2_bytes = 2 * 128 * m * 2;
        t.fixpipe_bytes = 128 * 128 * 2;
        t.pipeline_steps = 16;
        t.shared_reads = {{i, 128 * m * 2, 0}, {(1ull << 32) | j, 128 * m * 2, 1}};
        w.tiles.push_back(t);
      }
    }
    w.reads = {a, b};
    w.writes = {c};
    return w;
  };
  CorePool pool(p);
  const uint64_t run = pool.NextFreshSpace();
  const AddressRange x{run, 0, bytes}, b{ConstantSpace(7), 0, bytes}, a{kRunArenaSpace, 0, bytes},
      c{run, bytes, bytes};
  const ScheduledOp cold = pool.Schedule(gemm(x, b, c), 0);
  EXPECT_EQ(cold.hbm_bytes, 2 * bytes);  // each panel fetched once, every other read of it hits
  EXPECT_EQ(cold.l2_hit_bytes, 64 * 2 * 128 * m * 2 - 2 * bytes);
  const ScheduledOp act = pool.Schedule(Elementwise(p, bytes, c, a), cold.complete);
  EXPECT_EQ(act.hbm_bytes, 0u);  // the GEMM's result was written into the L2
  const ScheduledOp warm = pool.Schedule(gemm(a, b, {run, 2 * bytes, bytes}), act.complete);
  EXPECT_EQ(warm.hbm_bytes, 0u);  // A from the activation, B still resident from the first GEMM
  EXPECT_EQ(warm.l2_hit_bytes, 64 * 2 * 128 * m * 2);
}

}  // namespace
}  // namespace npu::device
