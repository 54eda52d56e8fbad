// The core's entry point for a run (graph/runner.h) and the plan's buffer
// arena (graph/arena_plan.h): results equal float64 references whatever the
// storage, no two live values share bytes, outputs survive the next run, and an
// op that throws fails its run alone.
#include "server/graph/runner.h"

#include <cmath>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "client/graph_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/graph/op_registry.h"
#include "server/graph/ops/parallel_for.h"
#include "server/graph/plan.h"

namespace npu::graph {
namespace {

using ::testing::HasSubstr;

// Test-only ops, registered before any plan is built.
const bool kTestOpsRegistered = [] {
  auto pass_through = [](InferContext& c) -> absl::StatusOr<std::vector<TensorType>> {
    return std::vector<TensorType>{*c.inputs[0]};
  };
  OpDef thrower;
  thrower.name = "TestThrow";
  thrower.dtypes = {v1::FLOAT32};
  thrower.attributes = {{"how", AttrKind::kString, {"runtime", "bad_alloc", "parallel"}}};
  thrower.infer = pass_through;
  thrower.run = [](RunContext& ctx) -> absl::Status {
    const std::string how = ctx.attrs.String("how", "runtime").value();
    if (how == "bad_alloc") throw std::bad_alloc();
    if (how == "parallel") {
      ops::ParallelFor(64, kernels::kParallelGrainElements, [](int64_t i) {  // enough work for a parallel region
        if (i == 37) throw std::runtime_error("tile 37 failed");
      });
    }
    throw std::runtime_error("kernel bug");
  };
  OpRegistry::Global().Register(thrower);
  OpDef infer_thrower = thrower;
  infer_thrower.name = "TestThrowAtPlan";
  infer_thrower.infer = [](InferContext&) -> absl::StatusOr<std::vector<TensorType>> {
    throw std::length_error("vector too long");
  };
  OpRegistry::Global().Register(infer_thrower);
  return true;
}();

device::Device& TestDevice() {
  static device::Device d(0, device::PresetByName("ascend910").value(), device::DeviceOptions{.omp_threads = 2});
  return d;
}

std::shared_ptr<const Plan> MustPlan(const v1::Graph& g, const device::Device& device = TestDevice(),
                                     const PlanOptions& options = {}) {
  auto plan = BuildPlan(std::make_shared<const v1::Graph>(g), device.preset(), {}, options);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? *plan : nullptr;
}

HostTensor Floats(const std::vector<float>& v, Shape shape) {
  HostTensor t = HostTensor::Allocate({v1::FLOAT32, std::move(shape)});
  std::copy(v.begin(), v.end(), t.mutable_as<float>());
  return t;
}

std::vector<float> Values(const HostTensor& t) {
  return std::vector<float>(t.as<float>(), t.as<float>() + t.type().elements());
}

TEST(ArenaPlanTest, AChainNeedsTwoBuffersWhateverItsLength) {
  client::GraphBuilder g("chain");
  client::Value v = g.Input("x", v1::FLOAT32, {1000});
  for (int i = 0; i < 50; ++i) v = g.Relu(v);
  g.Output(g.Relu(v), "y");
  auto plan = MustPlan(g.Build(), TestDevice(), PlanOptions{.fuse = false});  // fused, it is one node
  ASSERT_NE(plan, nullptr);
  // Each intermediate (4000 bytes, 4032 aligned) dies when the next is made;
  // the last is a graph output, on its own buffer.
  EXPECT_EQ(plan->arena_bytes, 2u * 4032u);
}

// Builds a random DAG of elementwise ops and views, then checks the storage
// against an independent sweep: values alive at the same node never overlap.
TEST(ArenaPlanTest, LiveValuesNeverShareBytesInRandomGraphs) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    client::GraphBuilder g("dag");
    std::vector<client::Value> pool = {g.Input("x", v1::FLOAT32, {2, 8}), g.Input("y", v1::FLOAT32, {2, 8})};
    const int nodes = 3 + static_cast<int>(rng() % 30);
    for (int i = 0; i < nodes; ++i) {
      const client::Value a = pool[rng() % pool.size()], b = pool[rng() % pool.size()];
      switch (rng() % 4) {
        case 0: pool.push_back(g.Add(a, b)); break;
        case 1: pool.push_back(g.Relu(a)); break;
        case 2: pool.push_back(g.Op("Identity", {a})); break;  // a view
        default: pool.push_back(g.Mul(a, b)); break;
      }
    }
    g.Output(pool.back(), "out");
    if (rng() % 2) g.Output(pool[pool.size() / 2], "mid");
    auto plan = MustPlan(g.Build());
    ASSERT_NE(plan, nullptr);
    const int n = static_cast<int>(plan->nodes.size());
    // Liveness by brute force, views resolved to the value they view.
    std::vector<int> root(plan->values.size());
    for (size_t v = 0; v < root.size(); ++v) root[v] = static_cast<int>(v);
    for (const PlanNode& pn : plan->nodes) {
      if (pn.op->output_aliases_input >= 0) root[pn.outputs[0]] = root[pn.inputs[0]];
    }
    std::vector<int> first(plan->values.size(), n), last(plan->values.size(), -1);
    for (int k = 0; k < n; ++k) {
      for (int v : plan->nodes[k].outputs) first[root[v]] = std::min(first[root[v]], k);
      for (int v : plan->nodes[k].inputs) last[root[v]] = std::max(last[root[v]], k);
      for (int v : plan->nodes[k].outputs) last[root[v]] = std::max(last[root[v]], k);
    }
    for (size_t a = 0; a < plan->values.size(); ++a) {
      const PlanValue& va = plan->values[a];
      if (va.storage != ValueStorage::kArena) continue;
      EXPECT_EQ(va.arena_offset % 64, 0);
      EXPECT_LE(static_cast<uint64_t>(va.arena_offset) + va.type.bytes(), plan->arena_bytes);
      for (size_t b = a + 1; b < plan->values.size(); ++b) {
        const PlanValue& vb = plan->values[b];
        if (vb.storage != ValueStorage::kArena) continue;
        const bool live_together = first[a] <= last[b] && first[b] <= last[a];
        const bool overlap = va.arena_offset < vb.arena_offset + static_cast<int64_t>(vb.type.bytes()) &&
                             vb.arena_offset < va.arena_offset + static_cast<int64_t>(va.type.bytes());
        EXPECT_FALSE(live_together && overlap) << "trial " << trial << ": " << va.name << " and " << vb.name;
      }
    }
  }
}

// (x + y) * relu(x), reshaped, with intermediates in the arena and the output
// a view of a buffer of its own; checked against float64, and still intact
// after the next run has reused the arena.
TEST(RunnerTest, ResultsMatchFloat64AndOutputsOutliveTheNextRun) {
  client::GraphBuilder g("mix");
  auto x = g.Input("x", v1::FLOAT32, {4, 8});
  auto y = g.Input("y", v1::FLOAT32, {4, 8});
  auto shape = g.Constant("shape", [] {
    v1::Tensor t;
    t.set_dtype(v1::INT64);
    t.add_shape(2);
    const int64_t dims[2] = {8, 4};
    t.set_data(reinterpret_cast<const char*>(dims), sizeof(dims));
    return t;
  }());
  auto prod = g.Mul(g.Add(x, y), g.Relu(x));
  g.Output(g.Op("Reshape", {g.Relu(prod), shape}), "out");
  auto plan = MustPlan(g.Build());
  ASSERT_NE(plan, nullptr);
  EXPECT_GT(plan->arena_bytes, 0u);

  auto run = [&](float scale) {
    std::vector<float> xs(32), ys(32);
    for (int i = 0; i < 32; ++i) xs[i] = scale * (i - 15.5f), ys[i] = scale * 0.25f * (31 - i);
    auto r = RunPlan(plan, {Floats(xs, {4, 8}), Floats(ys, {4, 8})}, ExecOptions{}, TestDevice());
    EXPECT_TRUE(r.ok()) << r.status();
    std::vector<double> want(32);
    for (int i = 0; i < 32; ++i) {
      const double p = (double(xs[i]) + ys[i]) * std::max(0.0, double(xs[i]));
      want[i] = std::max(0.0, p);
    }
    return std::make_pair(r->outputs[0], want);
  };
  auto [first, first_want] = run(1.0f);
  auto [second, second_want] = run(-3.0f);
  EXPECT_EQ(first.type().shape, (Shape{8, 4}));
  for (int i = 0; i < 32; ++i) {
    EXPECT_EQ(first.as<float>()[i], static_cast<float>(first_want[i])) << i;  // one rounding per op: exact here
    EXPECT_EQ(second.as<float>()[i], static_cast<float>(second_want[i])) << i;
  }
}

TEST(RunnerTest, AnOpThatThrowsFailsItsRunNamingTheNodeAndTheNextRunWorks) {
  for (const std::string how : {"runtime", "bad_alloc", "parallel"}) {
    // Big enough (> kSmallRunBytes) to run on the device's worker and its
    // OpenMP team, where a throw inside a parallel region must not terminate.
    const int64_t n = 100000;
    client::GraphBuilder g("throws");
    auto x = g.Input("x", v1::FLOAT32, {n});
    g.Output(g.Op("TestThrow", {g.Relu(x)}, {{"how", client::AttrString(how)}}), "y");
    auto plan = MustPlan(g.Build());
    ASSERT_NE(plan, nullptr);
    auto r = RunPlan(plan, {Floats(std::vector<float>(n, 1.0f), {n})}, ExecOptions{}, TestDevice());
    ASSERT_FALSE(r.ok()) << how;
    EXPECT_EQ(r.status().code(),
              how == "bad_alloc" ? absl::StatusCode::kResourceExhausted : absl::StatusCode::kInternal)
        << how;
    EXPECT_THAT(std::string(r.status().message()), HasSubstr("node \"TestThrow_0\" (TestThrow)"));
    if (how == "parallel") EXPECT_THAT(std::string(r.status().message()), HasSubstr("tile 37 failed"));

    client::GraphBuilder fine("fine");
    fine.Output(fine.Relu(fine.Input("x", v1::FLOAT32, {2})), "y");
    auto good = RunPlan(MustPlan(fine.Build()), {Floats({-1, 5}, {2})}, ExecOptions{}, TestDevice());
    ASSERT_TRUE(good.ok()) << good.status();
    EXPECT_EQ(Values(good->outputs[0]), (std::vector<float>{0, 5}));
  }
}

TEST(RunnerTest, AnInferenceThatThrowsIsAnInternalErrorNamingTheNode) {
  client::GraphBuilder g("throws_at_plan");
  g.Output(g.Op("TestThrowAtPlan", {g.Input("x", v1::FLOAT32, {4})}), "y");
  auto plan = BuildPlan(std::make_shared<const v1::Graph>(g.Build()), TestDevice().preset());
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr("(TestThrowAtPlan)"));
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr("vector too long"));
}

TEST(RunnerTest, ACancelledRunEndsWithItsReasonWithoutRunning) {
  client::GraphBuilder g("r");
  g.Output(g.Relu(g.Input("x", v1::FLOAT32, {2})), "y");
  auto plan = MustPlan(g.Build());
  auto cancel = std::make_shared<device::CancelToken>();
  cancel->Cancel(absl::DeadlineExceededError("the run passed its deadline"));
  auto r = RunPlan(plan, {Floats({1, 2}, {2})}, ExecOptions{}, TestDevice(), cancel);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded);
}

TEST(RunnerTest, InputsAndDeviceMustMatchThePlan) {
  client::GraphBuilder g("r");
  g.Output(g.Relu(g.Input("x", v1::FLOAT32, {2})), "y");
  auto plan = MustPlan(g.Build());
  auto wrong_shape = RunPlan(plan, {Floats({1, 2, 3}, {3})}, ExecOptions{}, TestDevice());
  EXPECT_EQ(wrong_shape.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(wrong_shape.status().message()), HasSubstr("input \"x\" is FLOAT32[3]"));
  auto missing = RunPlan(plan, {}, ExecOptions{}, TestDevice());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);

  device::Device other(1, device::PresetByName("ascend310").value(), device::DeviceOptions{});
  auto elsewhere = RunPlan(plan, {Floats({1, 2}, {2})}, ExecOptions{}, other);
  EXPECT_EQ(elsewhere.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(elsewhere.status().message()), HasSubstr("planned for ascend910"));
}

}  // namespace
}  // namespace npu::graph
