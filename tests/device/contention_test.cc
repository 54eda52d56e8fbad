// Runs of two clients on one device. Runs execute one at a time on the host;
// a run submitted while another executes arrives where that one has got in
// modeled time (modeled_clock.h), and its ops go into the cores, bandwidth and
// issue slots the other left. Run B is submitted from inside run A's job, so
// the interleaving does not depend on host timing. References are closed
// forms: bytes over bandwidth, and the same runs scheduled alone.
#include <algorithm>
#include <future>
#include <memory>
#include <vector>

#include "gtest/gtest.h"
#include "server/device/device.h"

namespace npu::device {
namespace {

// `tiles` equal tiles of `type`, each reading `hbm` bytes in 64 steps over
// `cycles` of Cube MACs (AI_CORE) or Vector repeats (AI_VECTOR_CORE).
OpWork Tiles(TaskType type, int tiles, uint64_t hbm, uint64_t cycles) {
  OpWork w;
  w.task_type = type;
  TileWork t;
  (type == TaskType::kAiCore ? t.cube_fractals : t.vector_repeats) = cycles;
  t.mte2_bytes = hbm;
  t.pipeline_steps = 64;
  w.tiles.assign(static_cast<size_t>(tiles), t);
  return w;
}
OpWork Streaming(int tiles, uint64_t hbm, uint64_t cycles) { return Tiles(TaskType::kAiVectorCore, tiles, hbm, cycles); }
OpWork Compute(int tiles, uint64_t fractals, uint64_t hbm) { return Tiles(TaskType::kAiCore, tiles, hbm, fractals); }

using Chain = std::vector<OpWork>;  // each op ready when the one before it is done

struct Cycles {
  uint64_t arrival = 0;
  std::vector<ScheduledOp> ops;
  uint64_t span() const { return ops.back().complete - arrival; }
};

// Schedules `chain` from `from` on the session's pool; `between(k)` runs after op k.
void ScheduleChain(DeviceSession& s, const Chain& chain, Cycles& run, const std::function<void(size_t)>& between = {}) {
  run.arrival = s.arrival_cycle;
  uint64_t ready = s.arrival_cycle;
  for (size_t k = 0; k < chain.size(); ++k) {
    run.ops.push_back(s.pool.Schedule(chain[k], ready));
    ready = run.ops.back().complete;
    if (between) between(k);
  }
}

struct TwoRuns {
  Cycles a, b;
};

// Run A schedules `a`; run B (`b`) is submitted from inside it after A's
// first `b_after` ops (0: before A issued anything, so both arrive together).
TwoRuns Interleave(Device& dev, const Chain& a, const Chain& b, size_t b_after) {
  TwoRuns r;
  std::promise<absl::Status> b_done;
  auto submit_b = [&] {
    dev.Submit([&](DeviceSession& sb) { ScheduleChain(sb, b, r.b); }, nullptr, false,
               [&](absl::Status st) { b_done.set_value(st); });
  };
  EXPECT_TRUE(dev.Execute([&](DeviceSession& s) {
                   if (b_after == 0) submit_b();
                   ScheduleChain(s, a, r.a, [&](size_t k) {
                     if (k + 1 == b_after) submit_b();
                   });
                 }).ok());
  EXPECT_TRUE(b_done.get_future().get().ok());
  return r;
}

Cycles Alone(const DevicePreset& p, const Chain& chain) {
  Device dev(0, p, DeviceOptions{});
  Cycles run;
  EXPECT_TRUE(dev.Execute([&](DeviceSession& s) { ScheduleChain(s, chain, run); }).ok());
  return run;
}

// Cycles relative to the run's arrival, so runs at different arrivals compare.
std::vector<uint64_t> Relative(const Cycles& r) {
  std::vector<uint64_t> v;
  for (const ScheduledOp& op : r.ops) {
    for (uint64_t c : {op.ready, op.dispatch, op.start, op.end, op.complete}) v.push_back(c - r.arrival);
    for (const TilePlacement& t : op.tiles) {
      v.push_back(t.start - r.arrival);
      v.push_back(t.end - r.arrival);
    }
  }
  return v;
}

uint64_t HbmBytes(const Cycles& r) {
  uint64_t b = 0;
  for (const ScheduledOp& op : r.ops) b += op.hbm_bytes;
  return b;
}

TEST(ContentionTest, ALaterRunArrivesWhereTheRunningOneHasGotAndSharesTheHbm) {
  // A's ops: 24 memory-bound tiles on the 910's 32 cores, together wanting
  // more than the HBM has. B, submitted after A issued its second op, arrives
  // there; its op, 8 such tiles, runs on the 8 cores left beside A's second op
  // and gets the HBM A leaves: alone it would stream at its own pace.
  const DevicePreset p = *PresetByName("ascend910");
  const OpWork a_op = Streaming(24, 8 << 20, 1000), b_op = Streaming(8, 8 << 20, 1000);
  Device dev(0, p, DeviceOptions{});
  const TwoRuns r = Interleave(dev, {a_op, a_op, a_op}, {b_op}, 2);
  const Cycles b_alone = Alone(p, {b_op});
  const ScheduledOp &a1 = r.a.ops[1], &b0 = r.b.ops[0];
  EXPECT_GT(a1.dispatch, r.a.arrival);
  EXPECT_EQ(r.b.arrival, a1.dispatch);  // the device's clock when B was submitted
  EXPECT_LT(b0.start, a1.end);          // the runs overlap in modeled time
  EXPECT_EQ(Relative(r.a), Relative(Alone(p, {a_op, a_op, a_op})));  // earlier work keeps its bandwidth
  EXPECT_GT(b0.end - b0.start, 2 * (b_alone.ops[0].end - b_alone.ops[0].start));  // B's tiles were starved
  // Together the ops never beat the HBM bandwidth: B ends no earlier than all the bytes since A's op allow.
  const double since_a1 = (24.0 * 2 + 8) * (8 << 20) / (p.hbm_bytes_per_s / p.clock_hz);
  EXPECT_GE(static_cast<double>(std::max(b0.end, r.a.ops[2].end) - a1.start), since_a1 * (1 - 1e-9));
  // B's issue took the first slot after A's.
  EXPECT_EQ(b0.dispatch, a1.dispatch + p.CyclesOfNs(p.task_gap_ns));
}

TEST(ContentionTest, CoresHeldByAnEarlierRunMakeALaterRunsOpWait) {
  // A's second op holds all 32 cores for 100,000 cycles; B's op, arriving as
  // it is issued, waits for them: its wait is what A's tiles left it.
  const DevicePreset p = *PresetByName("ascend910");
  const OpWork all_cores = Streaming(32, 0, 100000);
  const OpWork small = Streaming(1, 0, 1000);
  Device dev(0, p, DeviceOptions{});
  const TwoRuns r = Interleave(dev, {small, all_cores, small}, {small}, 2);
  const ScheduledOp &a1 = r.a.ops[1], &b = r.b.ops[0];
  const uint64_t launch = p.CyclesOfNs(p.task_launch_ns);
  EXPECT_EQ(b.ready, a1.dispatch);
  EXPECT_EQ(b.start, a1.end);  // the first core A frees
  EXPECT_EQ(b.start - b.ready - launch, a1.end - a1.dispatch - launch);
  // A's third op, scheduled before B's in host order, still comes after its producer.
  EXPECT_GE(r.a.ops[2].start, a1.complete);
}

TEST(ContentionTest, ARunsOwnTasksIssueInOrder) {
  // One run is one stream: a task ready before the previous one was issued
  // still issues after it, one gap later, even where an earlier slot is free.
  const DevicePreset p = *PresetByName("ascend910");
  Device dev(0, p, DeviceOptions{});
  std::vector<ScheduledOp> ops;
  ASSERT_TRUE(dev.Execute([&](DeviceSession& s) {
                   for (uint64_t ready : {0, 50000, 0}) ops.push_back(s.pool.Schedule(Streaming(1, 0, 100), ready));
                 }).ok());
  EXPECT_EQ(ops[1].dispatch, 50000u);
  EXPECT_EQ(ops[2].dispatch, 50000u + p.CyclesOfNs(p.task_gap_ns));
}

TEST(ContentionTest, TwoMemoryBoundRunsArrivingTogetherShareTheHbmAndTheSecondTakesTwiceItsTimeAlone) {
  // Two identical runs of 4 memory-bound ops (24 tiles of 8 MiB each: more
  // than the HBM serves), submitted together. The HBM serves both runs' bytes
  // once: the run scheduled second ends where all of them are through,
  // 2x its time alone, and no earlier than their bytes over the bandwidth;
  // the first keeps what it had alone, bit for bit.
  const DevicePreset p = *PresetByName("ascend910");
  const Chain chain(4, Streaming(24, 8 << 20, 1000));
  Device dev(0, p, DeviceOptions{});
  const TwoRuns r = Interleave(dev, chain, chain, 0);
  const Cycles alone = Alone(p, chain);
  EXPECT_EQ(r.a.arrival, r.b.arrival);
  EXPECT_EQ(Relative(r.a), Relative(alone));
  EXPECT_EQ(HbmBytes(r.b), HbmBytes(alone));
  const double ratio = static_cast<double>(r.b.span()) / static_cast<double>(alone.span());
  EXPECT_NEAR(ratio, 2.0, 0.05) << r.b.span() << " vs " << alone.span();
  const double bytes_bound = 2.0 * static_cast<double>(HbmBytes(alone)) / (p.hbm_bytes_per_s / p.clock_hz);
  EXPECT_GE(static_cast<double>(r.b.span()), bytes_bound);
}

TEST(ContentionTest, AComputeBoundAndAMemoryBoundRunOverlapOnTheSeparatedChip) {
  // On the 910B the Cube run takes the 24 cube cores and little HBM; the
  // Vector run streams on the 48 vector cores beside it with the HBM the
  // Cube run leaves. Together they take the longer of the two, not their
  // sum: the stream hides under the Cube run, and its time is its bytes over
  // the bandwidth the Cube run leaves.
  const DevicePreset p = *PresetByName("ascend910b");
  const Chain cube = {Compute(24, 3'000'000, 16 << 20)};
  const Chain stream = {Streaming(48, 32 << 20, 1000)};
  Device dev(0, p, DeviceOptions{});
  const TwoRuns r = Interleave(dev, cube, stream, 0);
  const Cycles cube_alone = Alone(p, cube), stream_alone = Alone(p, stream);
  EXPECT_EQ(Relative(r.a), Relative(cube_alone));
  EXPECT_LT(r.b.ops.back().complete, r.a.ops.back().complete);
  EXPECT_LT(static_cast<double>(cube_alone.span()), 0.7 * static_cast<double>(cube_alone.span() + stream_alone.span()));
  // The Cube run's tiles read at a steady rate while they run; the stream gets the rest.
  const ScheduledOp& c = r.a.ops[0];
  const double hbm = p.hbm_bytes_per_s / p.clock_hz;
  const double cube_rate = static_cast<double>(c.hbm_bytes) / static_cast<double>(c.tiles[0].end - c.tiles[0].start);
  const ScheduledOp& s = r.b.ops[0];
  const double expected = static_cast<double>(s.hbm_bytes) / (hbm - cube_rate);
  EXPECT_NEAR(static_cast<double>(s.end - s.start), expected, 0.01 * expected);
  EXPECT_GT(s.end - s.start, stream_alone.ops[0].end - stream_alone.ops[0].start);
}

TEST(ContentionTest, ARunAloneIsScheduledAsOnAFreshDevice) {
  // After other runs ended, a run alone sees nothing of them: the same cycles,
  // relative to its arrival, as on a fresh device, and it arrives where they ended.
  const DevicePreset p = *PresetByName("ascend910b");
  const Chain chain = {Streaming(40, 4 << 20, 5000), Compute(20, 100000, 1 << 20), Streaming(3, 1 << 20, 800)};
  Device dev(0, p, DeviceOptions{});
  (void)Interleave(dev, chain, chain, 1);
  uint64_t horizon = 0;
  ASSERT_TRUE(dev.Execute([&](DeviceSession& s) { horizon = s.pool.horizon(); }).ok());
  Cycles again;
  ASSERT_TRUE(dev.Execute([&](DeviceSession& s) { ScheduleChain(s, chain, again); }).ok());
  EXPECT_EQ(again.arrival, horizon);
  EXPECT_EQ(Relative(again), Relative(Alone(p, chain)));
}

TEST(ContentionTest, ARunDroppedWhileQueuedHoldsBackNoOne) {
  // A run cancelled while it waits stops waiting: the next run arrives where
  // the last one ended, and the issue slots before it are forgotten.
  const DevicePreset p = *PresetByName("ascend910");
  Device dev(0, p, DeviceOptions{});
  auto cancel = std::make_shared<CancelToken>();
  std::promise<absl::Status> dropped;
  Cycles a;
  ASSERT_TRUE(dev.Execute([&](DeviceSession& s) {
                   dev.Submit([](DeviceSession&) {}, cancel, false,
                              [&](absl::Status st) { dropped.set_value(st); });
                   cancel->Cancel(absl::CancelledError("gave up"));
                   ScheduleChain(s, {Streaming(4, 0, 5000), Streaming(4, 0, 5000), Streaming(4, 0, 5000)}, a);
                 }).ok());
  EXPECT_EQ(dropped.get_future().get().code(), absl::StatusCode::kCancelled);
  Cycles next;
  ASSERT_TRUE(dev.Execute([&](DeviceSession& s) { ScheduleChain(s, {Streaming(1, 0, 100)}, next); }).ok());
  EXPECT_EQ(next.arrival, a.ops.back().end);
  ASSERT_TRUE(dev.Execute([&](DeviceSession& s) { EXPECT_EQ(s.pool.issue_slots(), 1u); }).ok());
}

TEST(ContentionTest, ALongChainOfSmallOpsKeepsOnlyWhatWorkStillToComeCanMeet) {
  // 2,000 one-tile memory ops in a chain stay on one core (best fit), the
  // other cores idle since cycle 0; the bandwidth and issue history before the
  // latest issue is still forgotten, so the pool stays small on a long-lived server.
  const DevicePreset p = *PresetByName("ascend910");
  Device dev(0, p, DeviceOptions{});
  ASSERT_TRUE(dev.Execute([&](DeviceSession& s) {
                   Cycles run;
                   ScheduleChain(s, Chain(2000, Streaming(1, 1 << 20, 100)), run);
                   EXPECT_LE(s.pool.memory_steps(), 4u);
                   EXPECT_LE(s.pool.issue_slots(), 1u);
                 }).ok());
}

}  // namespace
}  // namespace npu::device
