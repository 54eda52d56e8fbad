// HCCL's ring allreduce as the device model runs it: the closed-form time
// 2(n-1)/n x bytes / link bandwidth + 2(n-1) x latency, the reduction's order
// (each segment summed round the ring from its own rank, fp16 partials
// rounded at each step), identical bits on every rank, and a group that fails
// every waiter when aborted.
#include <cmath>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/fp16.h"
#include "server/device/collective_cost.h"
#include "server/device/collective_group.h"

namespace npu::device {
namespace {

using kernels::FloatToHalf;
using kernels::half_bits;
using kernels::HalfToFloat;

DevicePreset Preset(const char* name) { return PresetByName(name).value(); }

TEST(RingAllReduceCostTest, FollowsTheRingFormula) {
  const DevicePreset p = Preset("ascend910");
  EXPECT_EQ(p.link_bytes_per_s, 30e9);
  EXPECT_EQ(p.link_latency_s, 2e-6);
  const uint64_t bytes = uint64_t{64} << 20;
  for (int n : {2, 4, 8}) {
    const double want = 2.0 * (n - 1) / n * static_cast<double>(bytes) / 30e9 + 2.0 * (n - 1) * 2e-6;
    EXPECT_DOUBLE_EQ(RingAllReduceSeconds(bytes, n, p), want) << n;
    EXPECT_EQ(RingAllReduceCycles(bytes, n, p), static_cast<uint64_t>(std::ceil(want * 1e9))) << n;
  }
  // 64 MiB over 4 devices: 1.5 x 67108864 B / 30 GB/s = 3.3554 ms, plus 6 steps of 2 us.
  EXPECT_NEAR(RingAllReduceSeconds(bytes, 4, p), 3.355443e-3 + 12e-6, 1e-9);
  EXPECT_EQ(RingAllReduceSeconds(bytes, 1, p), 0.0);
  // The 910B's link is faster: the same transfer takes 30/56 of the bandwidth term.
  const DevicePreset b = Preset("ascend910b");
  EXPECT_NEAR(RingAllReduceSeconds(bytes, 4, b) - 12e-6, (RingAllReduceSeconds(bytes, 4, p) - 12e-6) * 30 / 56, 1e-12);
}

// Runs AllReduce on `ranks` threads, rank r contributing `values[r]`; returns each rank's result.
template <typename T>
std::vector<std::vector<T>> RunRanks(CollectiveGroup& g, const std::vector<std::vector<T>>& values,
                                     kernels::ElemType type, std::vector<uint64_t> ready = {},
                                     std::vector<CollectiveGroup::Window>* windows = nullptr) {
  const int n = static_cast<int>(values.size());
  std::vector<std::vector<T>> out(values.size(), std::vector<T>(values[0].size()));
  std::vector<CollectiveGroup::Window> w(values.size());
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      auto result = g.AllReduce("bucket", r, {{values[r].data(), out[r].data(), type, static_cast<int64_t>(values[r].size())}},
                                ready.empty() ? 0 : ready[r]);
      ASSERT_TRUE(result.ok()) << result.status();
      w[r] = *result;
    });
  }
  for (auto& t : threads) t.join();
  if (windows) *windows = w;
  return out;
}

TEST(CollectiveGroupTest, EveryRankGetsTheExactSum) {
  CollectiveGroup g(4, Preset("ascend910"));
  std::vector<std::vector<float>> values(4);
  for (int r = 0; r < 4; ++r) {
    for (int i = 0; i < 1001; ++i) values[r].push_back(static_cast<float>((r + 1) * 1000 + i));  // exact in fp32
  }
  const auto out = RunRanks(g, values, kernels::ElemType::kFloat32);
  for (int i = 0; i < 1001; ++i) {
    EXPECT_EQ(out[0][i], 10000.0f + 4 * i);
    for (int r = 1; r < 4; ++r) EXPECT_EQ(out[r][i], out[0][i]);
  }
}

TEST(CollectiveGroupTest, Fp16SegmentsAreSummedRoundTheRingFromTheirOwnRank) {
  // Four elements over four ranks: element c is segment c, summed x_c + x_(c+1) + x_(c+2) + x_(c+3).
  // Element c holds 1 on rank c and c+1, 2048 on rank c+2, 0 on rank c+3: from rank c the
  // ones make 2 before meeting 2048, so 2050; an order that meets 2048 first loses each 1
  // (2048 + 1 rounds to 2048, ties to even), as summing every element from rank 0 would
  // for elements 2 and 3.
  std::vector<std::vector<half_bits>> values(4, std::vector<half_bits>(4));
  for (int c = 0; c < 4; ++c) {
    values[c][c] = FloatToHalf(1);
    values[(c + 1) % 4][c] = FloatToHalf(1);
    values[(c + 2) % 4][c] = FloatToHalf(2048);
    values[(c + 3) % 4][c] = FloatToHalf(0);
  }
  CollectiveGroup g(4, Preset("ascend910b"));
  const auto out = RunRanks(g, values, kernels::ElemType::kFloat16);
  for (int c = 0; c < 4; ++c) EXPECT_EQ(HalfToFloat(out[0][c]), 2050.0f) << "element " << c;
  for (int r = 1; r < 4; ++r) EXPECT_EQ(out[r], out[0]) << "rank " << r;
}

TEST(CollectiveGroupTest, AnFp16SumThatOverflowsIsCountedAndSaturatesOnThe910) {
  std::vector<std::vector<half_bits>> values(2, {FloatToHalf(40000), FloatToHalf(1)});
  std::vector<CollectiveGroup::Window> w;
  CollectiveGroup g(2, Preset("ascend910"));
  const auto out = RunRanks(g, values, kernels::ElemType::kFloat16, {}, &w);
  EXPECT_EQ(HalfToFloat(out[0][0]), 65504.0f);
  EXPECT_EQ(HalfToFloat(out[1][1]), 2.0f);
  EXPECT_EQ(w[0].overflow_elements, 1u);
  EXPECT_EQ(w[1].overflow_elements, 1u);
}

TEST(CollectiveGroupTest, TheWindowStartsWhenTheLastRankIsReadyAndTheLinksAreFree) {
  const DevicePreset p = Preset("ascend910");
  CollectiveGroup g(2, p);
  std::vector<std::vector<float>> values(2, std::vector<float>(1 << 16, 1.0f));
  std::vector<CollectiveGroup::Window> w;
  RunRanks(g, values, kernels::ElemType::kFloat32, {1000, 5000}, &w);
  const uint64_t cycles = RingAllReduceCycles(4 << 16, 2, p);
  EXPECT_EQ(w[0].start, 5000u);
  EXPECT_EQ(w[0].end, 5000u + cycles);
  EXPECT_EQ(w[1].start, w[0].start);
  EXPECT_EQ(w[0].bytes, 4u << 16);
  // A second collective waits for the links: ready at 0, it starts when the first ended.
  std::vector<std::vector<float>> more(2, std::vector<float>(16, 1.0f));
  std::vector<std::thread> threads;
  std::vector<CollectiveGroup::Window> w2(2);
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] { w2[r] = *g.AllReduce("second", r, {{more[r].data(), more[r].data(), kernels::ElemType::kFloat32, 16}}, 0); });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(w2[0].start, w[0].end);
}

TEST(CollectiveGroupTest, AbortWakesTheWaitingRanks) {
  CollectiveGroup g(3, Preset("ascend910"));
  std::vector<float> v(8, 1.0f);
  std::vector<absl::Status> got(2);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      got[r] = g.AllReduce("b", r, {{v.data(), v.data(), kernels::ElemType::kFloat32, 8}}, 0).status();
    });
  }
  // Rank 2 never comes (its run failed): whoever learns that aborts the group.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  g.Abort(absl::CancelledError("rank 2 stopped"));
  for (auto& t : threads) t.join();
  for (const absl::Status& s : got) {
    EXPECT_EQ(s.code(), absl::StatusCode::kCancelled);
    EXPECT_EQ(s.message(), "rank 2 stopped");
  }
  // Later calls fail at once.
  EXPECT_EQ(g.AllReduce("c", 2, {}, 0).status().code(), absl::StatusCode::kCancelled);
}

TEST(CollectiveGroupTest, MismatchedBuffersAreAnError) {
  CollectiveGroup g(2, Preset("ascend910"));
  std::vector<float> a(4), b(5);
  absl::Status s0, s1;
  std::thread t0([&] { s0 = g.AllReduce("b", 0, {{a.data(), a.data(), kernels::ElemType::kFloat32, 4}}, 0).status(); });
  std::thread t1([&] { s1 = g.AllReduce("b", 1, {{b.data(), b.data(), kernels::ElemType::kFloat32, 5}}, 0).status(); });
  t0.join();
  t1.join();
  EXPECT_EQ(s0.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(s1.code(), absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace npu::device
