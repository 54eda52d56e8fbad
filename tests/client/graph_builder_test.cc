#include "client/graph_builder.h"

#include <set>

#include "client/host_tensor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace npu::client {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

npu::v1::Tensor Weights(std::vector<int64_t> shape) {
  const int64_t count = *ElementCount(shape);
  return *MakeFloatTensor(npu::v1::FLOAT16, shape, std::vector<float>(count, 0.5f));
}

TEST(GraphBuilderTest, BuildsTheMlpOfTheReadme) {
  GraphBuilder g("mlp");
  Value x = g.Input("x", npu::v1::FLOAT16, {4, 8});
  Value w = g.Constant("w", Weights({8, 16}));
  Value b = g.Constant("b", Weights({16}));
  Value y = g.Relu(g.Add(g.MatMul(x, w), b));
  g.Output(y, "y");
  ASSERT_TRUE(g.status().ok()) << g.status();
  npu::v1::Graph graph = g.Build();

  EXPECT_EQ(graph.name(), "mlp");
  ASSERT_EQ(graph.inputs_size(), 1);
  EXPECT_EQ(graph.inputs(0).name(), "x");
  EXPECT_EQ(graph.inputs(0).dtype(), npu::v1::FLOAT16);
  EXPECT_THAT(graph.inputs(0).shape(), ElementsAre(4, 8));
  ASSERT_EQ(graph.initializers_size(), 2);
  EXPECT_EQ(graph.initializers(0).name(), "w");
  EXPECT_EQ(graph.initializers(0).tensor().data().size(), 8u * 16 * 2);

  ASSERT_EQ(graph.nodes_size(), 3);
  EXPECT_EQ(graph.nodes(0).name(), "MatMul_0");
  EXPECT_EQ(graph.nodes(0).op_type(), "MatMul");
  EXPECT_THAT(graph.nodes(0).inputs(), ElementsAre("x", "w"));
  EXPECT_THAT(graph.nodes(0).outputs(), ElementsAre("MatMul_0_out"));
  EXPECT_EQ(graph.nodes(1).name(), "Add_0");
  EXPECT_THAT(graph.nodes(1).inputs(), ElementsAre("MatMul_0_out", "b"));
  EXPECT_EQ(graph.nodes(2).name(), "Relu_0");
  EXPECT_THAT(graph.nodes(2).inputs(), ElementsAre("Add_0_out"));
  // The output is renamed where it is defined.
  EXPECT_THAT(graph.nodes(2).outputs(), ElementsAre("y"));
  EXPECT_THAT(graph.outputs(), ElementsAre("y"));
}

TEST(GraphBuilderTest, NamesAreUniquePerOpType) {
  GraphBuilder g("chain");
  Value v = g.Input("x", npu::v1::FLOAT32, {2});
  for (int i = 0; i < 3; ++i) v = g.Relu(v);
  g.Output(g.Mul(v, v));
  npu::v1::Graph graph = g.Build();
  ASSERT_EQ(graph.nodes_size(), 4);
  EXPECT_EQ(graph.nodes(0).name(), "Relu_0");
  EXPECT_EQ(graph.nodes(1).name(), "Relu_1");
  EXPECT_EQ(graph.nodes(2).name(), "Relu_2");
  EXPECT_EQ(graph.nodes(3).name(), "Mul_0");
  EXPECT_THAT(graph.outputs(), ElementsAre("Mul_0_out"));
  std::set<std::string> names;
  for (const auto& node : graph.nodes()) {
    EXPECT_TRUE(names.insert(node.name()).second);
    for (const auto& out : node.outputs()) EXPECT_TRUE(names.insert(out).second) << out;
  }
}

TEST(GraphBuilderTest, AutoNamesAvoidUserNames) {
  GraphBuilder g("clash");
  Value x = g.Input("Relu_0_out", npu::v1::FLOAT32, {2});
  Value y = g.Relu(x);
  EXPECT_EQ(y.name, "Relu_1_out");
  EXPECT_TRUE(g.status().ok()) << g.status();
}

TEST(GraphBuilderTest, GenericOpWithAttributes) {
  GraphBuilder g("softmax");
  Value x = g.Input("x", npu::v1::FLOAT32, {2, 5});
  Value y = g.Op("Softmax", {x}, {{"axis", AttrInt(-1)}});
  std::vector<Value> parts = g.OpN("Split", {y}, 2, {{"split", AttrInts({2, 3})}, {"axis", AttrInt(1)}});
  Value h = g.Cast(parts[1], npu::v1::FLOAT16);
  g.Output(parts[0], "first");
  g.Output(h);
  npu::v1::Graph graph = g.Build();
  ASSERT_EQ(graph.nodes_size(), 3);
  EXPECT_EQ(graph.nodes(0).attributes().at("axis").i(), -1);
  EXPECT_THAT(graph.nodes(1).outputs(), ElementsAre("first", "Split_0_out1"));
  EXPECT_THAT(graph.nodes(1).attributes().at("split").ints().values(), ElementsAre(2, 3));
  EXPECT_EQ(graph.nodes(2).op_type(), "Cast");
  EXPECT_EQ(graph.nodes(2).attributes().at("to").i(), 10);  // ONNX FLOAT16
  EXPECT_THAT(graph.nodes(2).inputs(), ElementsAre("Split_0_out1"));
  EXPECT_THAT(graph.outputs(), ElementsAre("first", "Cast_0_out"));
}

TEST(GraphBuilderTest, RenamedOutputUsedLaterIsRenamedEverywhere) {
  GraphBuilder g("reuse");
  Value x = g.Input("x", npu::v1::FLOAT32, {2});
  Value r = g.Relu(x);
  g.Output(r, "hidden");
  g.Output(g.Add(r, r), "y");
  npu::v1::Graph graph = g.Build();
  EXPECT_THAT(graph.nodes(0).outputs(), ElementsAre("hidden"));
  EXPECT_THAT(graph.nodes(1).inputs(), ElementsAre("hidden", "hidden"));
  EXPECT_THAT(graph.outputs(), ElementsAre("hidden", "y"));
}

TEST(GraphBuilderTest, InputReturnedUnderAnotherNameGoesThroughIdentity) {
  GraphBuilder g("passthrough");
  Value x = g.Input("x", npu::v1::FLOAT32, {2});
  g.Output(x, "copy");
  npu::v1::Graph graph = g.Build();
  ASSERT_EQ(graph.nodes_size(), 1);
  EXPECT_EQ(graph.nodes(0).op_type(), "Identity");
  EXPECT_THAT(graph.nodes(0).outputs(), ElementsAre("copy"));
  EXPECT_THAT(graph.outputs(), ElementsAre("copy"));
}

TEST(GraphBuilderTest, MisuseIsRecorded) {
  GraphBuilder g("bad");
  Value x = g.Input("x", npu::v1::FLOAT32, {2});
  g.Input("x", npu::v1::FLOAT32, {2});
  EXPECT_THAT(std::string(g.status().message()), HasSubstr("\"x\" defined twice"));

  GraphBuilder h("foreign");
  h.Relu(Value{"nowhere"});
  EXPECT_THAT(std::string(h.status().message()), HasSubstr("\"nowhere\" is not defined"));
  (void)x;
}

TEST(GraphBuilderTest, OnnxDataTypeCodes) {
  EXPECT_EQ(OnnxDataTypeCode(npu::v1::FLOAT32), 1);
  EXPECT_EQ(OnnxDataTypeCode(npu::v1::INT8), 3);
  EXPECT_EQ(OnnxDataTypeCode(npu::v1::INT32), 6);
  EXPECT_EQ(OnnxDataTypeCode(npu::v1::INT64), 7);
  EXPECT_EQ(OnnxDataTypeCode(npu::v1::BOOL), 9);
  EXPECT_EQ(OnnxDataTypeCode(npu::v1::FLOAT16), 10);
  EXPECT_EQ(OnnxDataTypeCode(npu::v1::DATA_TYPE_UNSPECIFIED), 0);
}

TEST(GraphBuilderTest, AttributeHelpers) {
  EXPECT_FLOAT_EQ(AttrFloat(0.5f).f(), 0.5f);
  EXPECT_EQ(AttrString("same").s(), "same");
  EXPECT_THAT(AttrFloats({1.0f, 2.0f}).floats().values(), ElementsAre(1.0f, 2.0f));
  EXPECT_THAT(AttrStrings({"a", "b"}).strings().values(), ElementsAre("a", "b"));
  EXPECT_EQ(AttrTensor(Weights({2})).t().data().size(), 4u);
}

}  // namespace
}  // namespace npu::client
