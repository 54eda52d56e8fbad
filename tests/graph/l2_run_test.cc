// The L2 across the ops of real runs (docs/device-model.md, "L2"): the
// executor hands every node's tensor addresses to the device model, so an
// intermediate the op before wrote is read from the L2, and a plan's
// constants stay resident from one run to the next on the same device.
// References are the tensors' own byte sizes.
#include <memory>
#include <random>
#include <vector>

#include "client/graph_builder.h"
#include "gtest/gtest.h"
#include "server/device/device.h"
#include "server/graph/plan.h"
#include "server/graph/runner.h"
#include "tests/graph/random_tensor.h"

namespace npu::graph {
namespace {

TEST(L2RunTest, IntermediatesHitTheL2AndConstantsStayResidentAcrossRuns) {
  constexpr int64_t kN = int64_t{1} << 20;
  constexpr uint64_t kBytes = kN * 2;  // fp16
  std::mt19937 rng(3);
  client::GraphBuilder g("chain");
  client::Value y = g.Op("Add", {g.Input("x", v1::FLOAT16, {kN}), g.Constant("c", testing::RandomTensor(v1::FLOAT16, {kN}, rng))});
  for (const char* op : {"Relu", "Neg", "Abs"}) y = g.Op(op, {y});
  g.Output(y, "y");
  device::Device dev(0, device::PresetByName("ascend910b").value(), device::DeviceOptions{});
  auto plan = BuildPlan(std::make_shared<const v1::Graph>(g.Build()), dev.preset(), {}, PlanOptions{.fuse = false});
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ((*plan)->nodes.size(), 4u);
  auto run = [&] {
    auto r = RunPlan(*plan, {testing::ToHost(testing::RandomTensor(v1::FLOAT16, {kN}, rng))},
                     ExecOptions{.profile = true, .debug = false, .device_id = ""}, dev);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->profile : v1::Profile{};
  };
  const v1::Profile first = run(), second = run();
  ASSERT_EQ(first.nodes_size(), 4);
  ASSERT_EQ(second.nodes_size(), 4);
  // Run 1: the Add fetches its input and the constant; every later node reads
  // what the one before wrote, from the L2 (2 + 1 + 1 + 1 tensors of 2 MiB
  // and the result fit the 910B's 192 MiB, so nothing is written back).
  EXPECT_EQ(first.nodes(0).hbm_bytes(), 2 * kBytes);
  EXPECT_EQ(first.nodes(0).l2_hit_bytes(), 0u);
  // Run 2: the input is new (copied in by the host), the constant is where
  // run 1 left it.
  EXPECT_EQ(second.nodes(0).hbm_bytes(), kBytes);
  EXPECT_EQ(second.nodes(0).l2_hit_bytes(), kBytes);
  for (const v1::Profile* p : {&first, &second}) {
    for (int k = 1; k < 4; ++k) {
      EXPECT_EQ(p->nodes(k).hbm_bytes(), 0u) << p->nodes(k).name();
      EXPECT_EQ(p->nodes(k).l2_hit_bytes(), kBytes) << p->nodes(k).name();
    }
  }
  EXPECT_EQ(first.model_version(), "davinci-cost-model/4");
  // What the simulation cost is part of the run's host time.
  for (const v1::Profile* p : {&first, &second}) {
    EXPECT_GT(p->model_time_us(), 0.0);
    EXPECT_LT(p->model_time_us(), p->host_time_us());
  }
}

}  // namespace
}  // namespace npu::graph
