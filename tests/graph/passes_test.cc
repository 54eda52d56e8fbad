// The import-time passes (server/graph/passes): the shape chain torch exports
// folds to a constant, Constant nodes fold, dead nodes go, dynamic dims bind
// to the inputs given, the plan (so the profile) shows only what is left, and
// the results are those of the unfolded graph.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "client/graph_builder.h"
#include "client/host_tensor.h"
#include "gtest/gtest.h"
#include "server/graph/passes/prepare_graph.h"
#include "server/graph/passes/shape_binding.h"
#include "tests/graph/plan_runner.h"

namespace npu::graph {
namespace {

using client::GraphBuilder;
using client::Value;

v1::Tensor Int64s(std::vector<int64_t> shape, std::vector<int64_t> values) {
  v1::Tensor t;
  t.set_dtype(v1::INT64);
  for (int64_t d : shape) t.add_shape(d);
  t.set_data(values.data(), values.size() * sizeof(int64_t));
  return t;
}

HostTensor Floats(std::vector<int64_t> shape, std::vector<float> values) {
  auto t = std::make_shared<v1::Tensor>(*client::MakeFloatTensor(v1::FLOAT32, shape, values));
  return HostTensor({v1::FLOAT32, shape}, t, reinterpret_cast<const std::byte*>(t->data().data()));
}

// y = Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])): torch's
// x.view(x.size(0), -1), plus a Constant node and a dead branch.
v1::Graph ViewGraph(std::vector<int64_t> x_shape) {
  GraphBuilder g("view");
  Value x = g.Input("x", v1::FLOAT32, x_shape);
  Value shape = g.Op("Shape", {x});
  Value zero = g.Constant("zero", Int64s({}, {0}));
  Value batch = g.Op("Gather", {shape, zero}, {{"axis", client::AttrInt(0)}});
  Value axes = g.Op("Constant", {}, {{"value", client::AttrTensor(Int64s({1}, {0}))}});
  Value b1 = g.Op("Unsqueeze", {batch, axes});
  Value minus_one = g.Constant("minus_one", Int64s({1}, {-1}));
  Value target = g.Op("Concat", {b1, minus_one}, {{"axis", client::AttrInt(0)}});
  Value y = g.Op("Reshape", {x, target});
  g.Op("Relu", {x});  // read by nothing
  g.Output(g.Relu(y), "y");
  return g.Build();
}

std::vector<std::string> OpTypes(const Plan& plan) {
  std::vector<std::string> ops;
  for (const PlanNode& n : plan.nodes) ops.push_back(n.node->op_type());
  return ops;
}

TEST(PassesTest, TheShapeChainFoldsAndDeadNodesGo) {
  const auto& preset = testing::DeviceFor().preset();
  auto prepared = PrepareGraph(std::make_shared<const v1::Graph>(ViewGraph({2, 3, 4})), nullptr, preset, {});
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  EXPECT_EQ(prepared->folded.folded_nodes, 5);  // Shape, Gather, Constant, Unsqueeze, Concat
  EXPECT_EQ(prepared->dead.removed_nodes, 1);
  auto plan = BuildPlan(prepared->graph, preset, {}, {}, prepared->weights);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(OpTypes(**plan), (std::vector<std::string>{"Reshape", "Relu"}));
  // The folded shape is a constant [2, -1]: the Reshape's output is [2, 12].
  EXPECT_EQ((*plan)->values[(*plan)->outputs[0]].type.shape, (Shape{2, 12}));
  // Only the folded target is added; the model's own initializers stay in weights.
  ASSERT_EQ(prepared->graph->initializers_size(), 1);
  const v1::Tensor& target = prepared->graph->initializers(0).tensor();
  ASSERT_EQ(target.dtype(), v1::INT64);
  int64_t dims[2];
  std::memcpy(dims, target.data().data(), sizeof dims);
  EXPECT_EQ(dims[0], 2);
  EXPECT_EQ(dims[1], -1);
}

TEST(PassesTest, FoldedAndUnfoldedGraphsComputeTheSame) {
  std::vector<float> xs(24);
  for (int i = 0; i < 24; ++i) xs[i] = static_cast<float>(i % 7) - 3.0f;
  auto folded = PreparePlan(std::make_shared<const v1::Graph>(ViewGraph({2, 3, 4})), nullptr,
                            testing::DeviceFor().preset(), {});
  ASSERT_TRUE(folded.ok()) << folded.status();
  auto run = testing::Execute(*folded, {Floats({2, 3, 4}, xs)});
  ASSERT_TRUE(run.ok()) << run.status();
  const float* y = run->outputs[0].as<float>();
  for (int i = 0; i < 24; ++i) EXPECT_EQ(y[i], std::max(xs[i], 0.0f)) << i;  // relu of x, viewed as [2,12]
}

TEST(PassesTest, DynamicDimsBindToTheInputsGiven) {
  const auto& preset = testing::DeviceFor().preset();
  auto model = std::make_shared<const v1::Graph>(ViewGraph({-1, 3, 4}));
  ASSERT_TRUE(HasDynamicInputs(*model));
  for (int64_t batch : {1, 5}) {
    const std::vector<TensorType> types = {{v1::FLOAT32, {batch, 3, 4}}};
    auto plan = PreparePlan(model, &types, preset, {});
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ((*plan)->values[(*plan)->outputs[0]].type.shape, (Shape{batch, 12}));
    EXPECT_EQ(OpTypes(**plan), (std::vector<std::string>{"Reshape", "Relu"}));  // the chain folded for this batch
  }
  const std::vector<TensorType> wrong = {{v1::FLOAT32, {2, 3, 5}}};
  auto bad = PreparePlan(model, &wrong, preset, {});
  EXPECT_EQ(bad.status().message(), "input \"x\" is FLOAT32[2,3,5]; the graph declares FLOAT32[?,3,4]");
  auto unbound = PreparePlan(model, nullptr, preset, {});
  EXPECT_NE(unbound.status().message().find("dynamic dims are bound from a run's inputs"), std::string::npos)
      << unbound.status();
}

TEST(PassesTest, AFoldedNodeThatFailsIsReportedByItsName) {
  GraphBuilder g("bad_gather");
  Value x = g.Input("x", v1::FLOAT32, {2, 3});
  Value shape = g.Op("Shape", {x});
  Value index = g.Constant("index", Int64s({1}, {7}));
  Value picked = g.Op("Gather", {shape, index});
  g.Output(g.Op("Reshape", {x, picked}), "y");
  v1::Graph graph = g.Build();
  const std::string gather = graph.nodes(1).name();
  auto plan = PreparePlan(std::make_shared<const v1::Graph>(graph), nullptr, testing::DeviceFor().preset(), {});
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("\"" + gather + "\" (Gather)"), std::string::npos) << plan.status();
  EXPECT_NE(plan.status().message().find("index 7"), std::string::npos) << plan.status();
}

TEST(PassesTest, NodesThatCannotBeInferredAreLeftForThePlannerToName) {
  GraphBuilder g("bad_reshape");
  Value x = g.Input("x", v1::FLOAT32, {2, 3});
  Value target = g.Constant("target", Int64s({1}, {7}));
  g.Output(g.Op("Reshape", {x, target}), "y");
  v1::Graph graph = g.Build();
  const std::string reshape = graph.nodes(0).name();
  auto plan = PreparePlan(std::make_shared<const v1::Graph>(graph), nullptr, testing::DeviceFor().preset(), {});
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("\"" + reshape + "\" (Reshape): cannot reshape"), std::string::npos)
      << plan.status();
}

}  // namespace
}  // namespace npu::graph
