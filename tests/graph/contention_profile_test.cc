// Two clients' runs of one graph on one device, as the runner submits them:
// the second, queued while the first executes, arrives with it in modeled
// time, so its op waits for the cores the first holds. Its profile row says
// how long (wait_cycles: issue to first block, less the launch latency), and
// its results are the same bits as the first's: contention changes only time.
#include <cstring>
#include <future>
#include <memory>
#include <vector>

#include "client/graph_builder.h"
#include "gtest/gtest.h"
#include "kernels/fp16.h"
#include "server/device/device.h"
#include "server/graph/executor.h"
#include "server/graph/host_tensor.h"
#include "server/graph/plan.h"

namespace npu::graph {
namespace {

HostTensor Halves(int64_t n, float scale) {
  HostTensor t = HostTensor::Allocate(TensorType{v1::FLOAT16, Shape{n}});
  auto* h = reinterpret_cast<kernels::half_bits*>(t.mutable_data());
  for (int64_t i = 0; i < n; ++i) h[i] = kernels::FloatToHalf(scale * static_cast<float>(i % 97));
  return t;
}

TEST(ContentionProfileTest, ASecondClientsOpWaitsForTheCoresOfTheFirstAndItsRowSaysHowLong) {
  constexpr int64_t kN = 1 << 20;  // split over all 32 cores of the 910
  client::GraphBuilder g("add");
  g.Output(g.Op("Add", {g.Input("a", v1::FLOAT16, {kN}), g.Input("b", v1::FLOAT16, {kN})}), "y");
  device::Device dev(0, device::PresetByName("ascend910").value(), device::DeviceOptions{});
  auto plan = BuildPlan(std::make_shared<const v1::Graph>(g.Build()), dev.preset());
  ASSERT_TRUE(plan.ok()) << plan.status();
  const ExecOptions options{.profile = true};
  auto run = [&](device::DeviceSession& s) {
    auto r = ExecutePlan(**plan, {Halves(kN, 0.5f), Halves(kN, 0.25f)}, options, s);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *std::move(r) : ExecResult{};
  };
  ExecResult first, second;
  std::promise<absl::Status> second_done;
  ASSERT_TRUE(dev.Execute([&](device::DeviceSession& s) {
                   dev.Submit([&](device::DeviceSession& s2) { second = run(s2); }, nullptr, false,
                              [&](absl::Status st) { second_done.set_value(st); });
                   first = run(s);
                 }).ok());
  ASSERT_TRUE(second_done.get_future().get().ok());
  ASSERT_EQ(first.profile.nodes_size(), 1);
  ASSERT_EQ(second.profile.nodes_size(), 1);
  const v1::NodeProfile &a = first.profile.nodes(0), &b = second.profile.nodes(0);
  const device::DevicePreset& p = dev.preset();
  const uint64_t launch = p.CyclesOfNs(p.task_launch_ns);
  ASSERT_EQ(a.block_dim(), 32);

  EXPECT_EQ(second.profile.start_cycle(), first.profile.start_cycle());  // they arrived together
  EXPECT_EQ(a.wait_cycles(), 0u);
  EXPECT_EQ(b.dispatch_cycle(), a.dispatch_cycle() + p.CyclesOfNs(p.task_gap_ns));  // the next issue slot
  // A's 32 equal blocks hold every core until they end together; B's start then.
  EXPECT_EQ(b.start_cycle(), a.end_cycle());
  EXPECT_EQ(b.wait_cycles(), a.end_cycle() - b.ready_cycle() - launch);
  EXPECT_EQ(b.end_cycle() - b.start_cycle(), a.end_cycle() - a.start_cycle());  // then as fast as A, HBM free again
  EXPECT_GT(second.profile.total_cycles(), first.profile.total_cycles());
  ASSERT_EQ(first.outputs.size(), 1u);
  ASSERT_EQ(second.outputs.size(), 1u);
  EXPECT_EQ(std::memcmp(first.outputs[0].data(), second.outputs[0].data(), first.outputs[0].bytes()), 0);
}

}  // namespace
}  // namespace npu::graph
