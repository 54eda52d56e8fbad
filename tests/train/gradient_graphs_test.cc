// A model's gradient graphs for a host autograd (gradient_graphs.h): the
// forward returns what the backward reads, the backward runs from the
// outputs' gradients alone (no forward node in it), and together they give
// the vector-Jacobian product exactly: small integers keep every fp16 Cube
// operand and fp32 sum exact, so the gradients equal the analytical ones.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/graph/plan.h"
#include "server/graph/runner.h"
#include "server/train/gradient_graphs.h"
#include "server/train/graph_editor.h"
#include "tests/train/train_test_support.h"

namespace npu::train {
namespace {

using ::testing::HasSubstr;
using testing::AddNode;
using testing::DeviceFor;

graph::HostTensor F32(graph::Shape shape, std::vector<float> values) {
  graph::HostTensor t = graph::HostTensor::Allocate({v1::FLOAT32, shape});
  for (size_t i = 0; i < values.size(); ++i) t.mutable_as<float>()[i] = values[i];
  return t;
}

v1::Tensor Proto(const graph::HostTensor& t) {
  v1::Tensor p;
  p.set_dtype(t.type().dtype);
  for (int64_t d : t.type().shape) p.add_shape(d);
  p.set_data(t.data(), t.bytes());
  return p;
}

// y = Relu(x W + b), x [2, 3] an input, W [3, 2] and b [2] initializers;
// z = ArgMax(y) an INT64 output beside it; u [2] an initializer nothing reads.
v1::Graph Mlp() {
  v1::Graph g;
  g.set_name("mlp");
  v1::ValueInfo* x = g.add_inputs();
  x->set_name("x");
  x->set_dtype(v1::FLOAT32);
  x->add_shape(2);
  x->add_shape(3);
  for (auto& [name, t] : std::map<std::string, graph::HostTensor>{
           {"W", F32({3, 2}, {1, -2, 3, 1, -1, 2})}, {"b", F32({2}, {1, -1})}, {"u", F32({2}, {5, 6})}}) {
    v1::Initializer* init = g.add_initializers();
    init->set_name(name);
    *init->mutable_tensor() = Proto(t);
  }
  AddNode(g, "mm", "MatMul", {"x", "W"}, {"xw"});
  AddNode(g, "bias", "Add", {"xw", "b"}, {"pre"});
  AddNode(g, "relu", "Relu", {"pre"}, {"y"});
  AddNode(g, "pick", "ArgMax", {"y"}, {"z"}, {{"axis", AttrInt(1)}});
  g.add_outputs("y");
  g.add_outputs("z");
  return g;
}

using Values = std::map<std::string, graph::HostTensor>;

Values RunGraph(const v1::Graph& g, const Values& given) {
  auto plan = graph::BuildPlan(std::make_shared<const v1::Graph>(g), DeviceFor("ascend910").preset());
  EXPECT_TRUE(plan.ok()) << plan.status();
  if (!plan.ok()) return {};
  std::vector<graph::HostTensor> inputs;
  for (int v : (*plan)->inputs) inputs.push_back(given.at((*plan)->values[v].name));
  auto result = graph::RunPlan(*plan, inputs, graph::ExecOptions{}, DeviceFor("ascend910"));
  EXPECT_TRUE(result.ok()) << result.status();
  Values out;
  if (!result.ok()) return out;
  for (size_t i = 0; i < (*plan)->outputs.size(); ++i) {
    out[(*plan)->values[(*plan)->outputs[i]].name] = result->outputs[i];
  }
  return out;
}

std::vector<float> Floats(const graph::HostTensor& t) {
  return {t.as<float>(), t.as<float>() + t.type().elements()};
}

TEST(GradientGraphsTest, TheBackwardGivesTheVectorJacobianProductFromTheForwardsValues) {
  auto built =
      BuildGradientGraphs(Mlp(), {{"W", "b", "u"}, {"W", "x", "b", "u"}, true}, DeviceFor("ascend910").preset());
  ASSERT_TRUE(built.ok()) << built.status();
  EXPECT_EQ(built->grad_outputs.size(), 2u);
  EXPECT_FALSE(built->grad_outputs[0].empty());
  EXPECT_EQ(built->grad_outputs[1], "");  // z is INT64: no gradient flows into it
  ASSERT_EQ(built->gradients.size(), 4u);

  std::set<std::string> forward_nodes;
  for (const auto& n : built->forward.nodes()) forward_nodes.insert(n.name());
  for (const auto& n : built->backward.nodes()) EXPECT_FALSE(forward_nodes.contains(n.name())) << n.name();

  const Values inputs = {{"x", F32({2, 3}, {1, 2, -1, -2, 1, 3})}, {"W", F32({3, 2}, {1, -2, 3, 1, -1, 2})},
                         {"b", F32({2}, {1, -1})}, {"u", F32({2}, {5, 6})}};
  Values forward = RunGraph(built->forward, inputs);
  // xW + b = [[1+6+1+1, -2+2-2-1], [-2+3-3+1, 4+1+6-1]] = [[9, -3], [-1, 10]].
  ASSERT_TRUE(forward.contains("y"));
  EXPECT_EQ(Floats(forward.at("y")), (std::vector<float>{9, 0, 0, 10}));
  for (const std::string& s : built->saved) EXPECT_TRUE(forward.contains(s)) << s;

  Values given = {{built->grad_outputs[0], F32({2, 2}, {1, 2, 3, 4})}};
  for (const auto& in : built->backward.inputs()) {
    if (given.contains(in.name())) continue;
    if (inputs.contains(in.name())) {
      given[in.name()] = inputs.at(in.name());
    } else {
      ASSERT_TRUE(forward.contains(in.name())) << in.name() << " is neither an input nor an output of the forward";
      given[in.name()] = forward.at(in.name());
    }
  }
  Values grads = RunGraph(built->backward, given);
  // g = dy * (pre > 0) = [[1, 0], [0, 4]]: dW = x^T g, dx = g W^T, db = column sums; u gets zeros.
  EXPECT_EQ(Floats(grads.at(built->gradients[0])), (std::vector<float>{1, -8, 2, 4, -1, 12}));
  EXPECT_EQ(Floats(grads.at(built->gradients[1])), (std::vector<float>{1, 3, -1, -8, 4, 8}));
  EXPECT_EQ(Floats(grads.at(built->gradients[2])), (std::vector<float>{1, 4}));
  EXPECT_EQ(Floats(grads.at(built->gradients[3])), (std::vector<float>{0, 0}));
}

TEST(GradientGraphsTest, RefusesWhatIsNotAParameterOrAnInput) {
  const auto& preset = DeviceFor("ascend910").preset();
  auto error = [&](GradientRequest r) {
    auto built = BuildGradientGraphs(Mlp(), r, preset);
    return built.ok() ? std::string("ok") : std::string(built.status().message());
  };
  EXPECT_THAT(error({{"xw"}, {"W"}, true}), HasSubstr("parameter \"xw\" is not a float initializer of the model"));
  EXPECT_THAT(error({{"W", "W"}, {"W"}, true}), HasSubstr("parameter \"W\" is named twice"));
  EXPECT_THAT(error({{"W"}, {"b"}, true}), HasSubstr("gradient of \"b\" asked for: it is neither a float input"));
  EXPECT_EQ(error({{"W"}, {}, true}), "ok");  // the forward alone
  v1::Graph dynamic = Mlp();
  dynamic.mutable_inputs(0)->set_shape(0, -1);
  auto built = BuildGradientGraphs(dynamic, {{"W"}, {"W"}, true}, preset);
  ASSERT_FALSE(built.ok());
  EXPECT_THAT(std::string(built.status().message()), HasSubstr("input \"x\" has a dynamic dim"));
}

}  // namespace
}  // namespace npu::train
