// Fair sharing of the chip's memory bandwidth: the max-min division among the
// tiles running at one moment, the step function of bandwidth already used,
// and the fluid placement of an op's tiles, against closed forms.
#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "server/device/bandwidth_share.h"
#include "server/device/memory_timeline.h"
#include "server/device/op_fluid.h"

namespace npu::device {
namespace {

TEST(MaxMinShareTest, EqualDemandsSplitTheCapacity) {
  const std::vector<double> g = MaxMinShare({{50, 1}, {50, 1}, {50, 1}, {50, 1}}, 100, 100);
  for (double x : g) EXPECT_DOUBLE_EQ(x, 25);
}

TEST(MaxMinShareTest, WhatSmallDemandsLeaveGoesToTheOthers) {
  // The textbook case: capacity 10, demands 2, 2.6, 4, 5 -> 2, 2.6, 2.7, 2.7.
  const std::vector<double> g = MaxMinShare({{2, 1}, {2.6, 1}, {4, 1}, {5, 1}}, 10, 100);
  EXPECT_NEAR(g[0], 2, 1e-12);
  EXPECT_NEAR(g[1], 2.6, 1e-12);
  EXPECT_NEAR(g[2], 2.7, 1e-12);
  EXPECT_NEAR(g[3], 2.7, 1e-12);
}

TEST(MaxMinShareTest, L2HitsAreNotHeldBackByAFullHbm) {
  // HBM 10 B/cycle: the two HBM-only tiles share it; the tile served by the
  // L2 gets its whole demand.
  const std::vector<double> g = MaxMinShare({{40, 1}, {40, 1}, {30, 0}}, 10, 100);
  EXPECT_NEAR(g[0], 5, 1e-12);
  EXPECT_NEAR(g[1], 5, 1e-12);
  EXPECT_NEAR(g[2], 30, 1e-12);
  // Half-and-half tiles stop when the first of their two resources fills.
  const std::vector<double> h = MaxMinShare({{100, 0.5}, {100, 0.5}}, 10, 100);
  EXPECT_NEAR(h[0], 10, 1e-12);  // 2 x 10 x 0.5 = the HBM capacity
  EXPECT_NEAR(h[1], 10, 1e-12);
}

TEST(MaxMinShareTest, NoCapacityGrantsNothing) {
  const std::vector<double> g = MaxMinShare({{10, 1}, {10, 0}}, 0, -5);
  EXPECT_EQ(g[0], 0);
  EXPECT_EQ(g[1], 0);
}

TEST(MemoryTimelineTest, AddsAndForgetsSteps) {
  MemoryTimeline m(100, 100);
  m.Add(10, 20, {30, 0});
  m.Add(15, 30, {10, 5});
  EXPECT_EQ(m.At(5).hbm, 0);
  EXPECT_EQ(m.At(10).hbm, 30);
  EXPECT_EQ(m.At(17).hbm, 40);
  EXPECT_EQ(m.At(17).l2, 5);
  EXPECT_EQ(m.At(25).hbm, 10);
  EXPECT_EQ(m.At(30).hbm, 0);
  EXPECT_EQ(m.NextChange(12), 15);
  EXPECT_TRUE(std::isinf(m.NextChange(30)));
  m.ForgetBefore(17);
  EXPECT_EQ(m.At(17).hbm, 40);
  EXPECT_EQ(m.At(16).hbm, 0);  // forgotten
  EXPECT_EQ(m.At(25).hbm, 10);
}

std::vector<int> Cores(int n) {
  std::vector<int> c(n);
  for (int i = 0; i < n; ++i) c[i] = i;
  return c;
}

TEST(PlaceFluidTest, TilesThatWantMoreThanTheBandwidthShareItAndEndTogether) {
  // 8 tiles of 100,000 HBM bytes, each able to finish in 1,000 cycles
  // (100 B/cycle); HBM gives 100 B/cycle in all: all end at 8 x 100,000 / 100.
  MemoryTimeline m(100, 1000);
  std::vector<uint64_t> free_at(8, 0);
  const std::vector<FluidTile> tiles(8, FluidTile{1000, 100000, 0});
  const auto placed = PlaceFluid(tiles, Cores(8), free_at, 0, {}, m);
  for (const auto& p : placed) {
    EXPECT_EQ(p.start, 0u);
    EXPECT_EQ(p.end, 8000u);
  }
  EXPECT_DOUBLE_EQ(m.At(4000).hbm, 100);  // the op's use, now committed
  EXPECT_DOUBLE_EQ(m.At(8000).hbm, 0);
}

TEST(PlaceFluidTest, ASmallTileFinishesFirstAndLeavesTheBandwidthToTheRest) {
  // Two tiles share 100 B/cycle: 50 each until the small one (20,000 B) is done
  // at 400; the large one (100,000 B) then has it all: ends at 120,000 / 100.
  MemoryTimeline m(100, 1000);
  std::vector<uint64_t> free_at(2, 0);
  const auto placed = PlaceFluid({FluidTile{10, 20000, 0}, FluidTile{10, 100000, 0}}, Cores(2), free_at, 0, {}, m);
  EXPECT_EQ(placed[0].end, 400u);
  EXPECT_EQ(placed[1].end, 1200u);
}

TEST(PlaceFluidTest, ALoneTileKeepsItsOwnPace) {
  MemoryTimeline m(100, 1000);
  std::vector<uint64_t> free_at(1, 0);
  const auto placed = PlaceFluid({FluidTile{1000, 5000, 0}}, Cores(1), free_at, 0, {}, m);
  EXPECT_EQ(placed[0].end, 1000u);  // 5 B/cycle, far under the bandwidth
}

TEST(PlaceFluidTest, LaterWorkGetsWhatEarlierWorkLeaves) {
  // Earlier work holds 60 of 100 B/cycle until cycle 1000: a tile of 100,000 B
  // gets 40 until then, 100 after: ends at 1000 + (100,000 - 40,000) / 100.
  MemoryTimeline m(100, 1000);
  m.Add(0, 1000, {60, 0});
  std::vector<uint64_t> free_at(1, 0);
  const auto placed = PlaceFluid({FluidTile{1, 100000, 0}}, Cores(1), free_at, 0, {}, m);
  EXPECT_EQ(placed[0].end, 1600u);
}

TEST(PlaceFluidTest, OneCoreNeverExceedsItsOwnRates) {
  // HBM is free but one core moves at most 25 B/cycle from HBM, 50 from L2.
  MemoryTimeline m(1000, 1000);
  std::vector<uint64_t> free_at(2, 0);
  const CoreMemoryRates rates{25, 50};
  const auto placed =
      PlaceFluid({FluidTile{1, 10000, 0}, FluidTile{1, 0, 10000}}, Cores(2), free_at, 0, rates, m);
  EXPECT_EQ(placed[0].end, 400u);
  EXPECT_EQ(placed[1].end, 200u);
}

TEST(PlaceFluidTest, TilesQueueOnBusyCoresInOrder) {
  // 3 compute-only tiles on 2 cores: the third starts where the first ends.
  MemoryTimeline m(100, 100);
  std::vector<uint64_t> free_at = {0, 50};
  const auto placed = PlaceFluid(std::vector<FluidTile>(3, FluidTile{100, 0, 0}), Cores(2), free_at, 10, {}, m);
  EXPECT_EQ(placed[0].core, 0);
  EXPECT_EQ(placed[0].start, 10u);
  EXPECT_EQ(placed[1].core, 1);
  EXPECT_EQ(placed[1].start, 50u);
  EXPECT_EQ(placed[2].core, 0);
  EXPECT_EQ(placed[2].start, 110u);
  EXPECT_EQ(free_at[0], 210u);
  EXPECT_EQ(free_at[1], 150u);
}

}  // namespace
}  // namespace npu::device
