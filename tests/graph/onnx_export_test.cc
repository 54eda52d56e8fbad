// ONNX export of an npu.v1.Graph (onnx/onnx_export.h): the importer reads the
// exported model back as the same graph, every attribute kind and dynamic dim
// included; an op that is not ONNX's own, or an attribute ONNX's op lacks, is
// refused naming the node.
#include <google/protobuf/util/message_differencer.h>

#include "client/graph_builder.h"
#include "gtest/gtest.h"
#include "onnx/onnx_export.h"
#include "onnx/onnx_import.h"
#include "onnx/onnx_pb.h"

namespace npu::onnxio {
namespace {

using client::AttrFloat;
using client::AttrInt;
using client::AttrInts;
using client::AttrString;
using client::AttrTensor;

v1::Tensor Floats(std::vector<int64_t> shape, const std::vector<float>& values) {
  v1::Tensor t;
  t.set_dtype(v1::FLOAT32);
  for (int64_t d : shape) t.add_shape(d);
  t.set_data(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  return t;
}

v1::ValueInfo Info(v1::DataType dtype, std::vector<int64_t> shape) {
  v1::ValueInfo v;
  v.set_dtype(dtype);
  for (int64_t d : shape) v.add_shape(d);
  return v;
}

// Conv (ints) - LeakyRelu (float) - MaxPool - Flatten (int) - Gemm - Gelu (string) + Constant (tensor).
v1::Graph Cnn() {
  client::GraphBuilder g("cnn");
  client::Value x = g.Input("images", v1::FLOAT32, {-1, 1, 4, 4});
  client::Value w = g.Constant("conv.weight", Floats({2, 1, 3, 3}, std::vector<float>(18, 0.25f)));
  client::Value c = g.Op("Conv", {x, w}, {{"pads", AttrInts({1, 1, 1, 1})}, {"kernel_shape", AttrInts({3, 3})}});
  client::Value r = g.Op("LeakyRelu", {c}, {{"alpha", AttrFloat(0.125f)}});
  client::Value p = g.Op("MaxPool", {r}, {{"kernel_shape", AttrInts({2, 2})}, {"strides", AttrInts({2, 2})}});
  client::Value f = g.Op("Flatten", {p}, {{"axis", AttrInt(1)}});
  client::Value fw = g.Constant("fc.weight", Floats({3, 8}, std::vector<float>(24, -0.5f)));
  client::Value y = g.Op("Gemm", {f, fw}, {{"transB", AttrInt(1)}, {"alpha", AttrFloat(2.0f)}});
  client::Value k = g.Op("Constant", {}, {{"value", AttrTensor(Floats({3}, {1, 2, 3}))}});
  g.Output(g.Op("Gelu", {g.Add(y, k)}, {{"approximate", AttrString("tanh")}}), "logits");
  return g.Build();
}

TEST(OnnxExportTest, TheImporterReadsTheExportBackAsTheSameGraph) {
  const v1::Graph graph = Cnn();
  auto bytes = ExportOnnx(graph, {Info(v1::FLOAT32, {-1, 3})});
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  ::onnx::ModelProto model;
  ASSERT_TRUE(model.ParseFromString(*bytes));
  ASSERT_EQ(model.opset_import_size(), 1);
  EXPECT_EQ(model.opset_import(0).version(), 20);  // Gelu is ONNX's from opset 20 (onnx/opsets.h)
  EXPECT_EQ(model.ir_version(), 9);
  // The batch dim stays dynamic: no value, on the input and on the output.
  EXPECT_FALSE(model.graph().input(0).type().tensor_type().shape().dim(0).has_dim_value());
  EXPECT_EQ(model.graph().output(0).type().tensor_type().shape().dim(1).dim_value(), 3);
  auto imported = ImportOnnxBytes(*std::move(bytes));
  ASSERT_TRUE(imported.ok()) << imported.status();
  std::string diff;
  google::protobuf::util::MessageDifferencer differ;
  differ.ReportDifferencesToString(&diff);
  EXPECT_TRUE(differ.Compare(graph, imported->graph)) << diff;
  ASSERT_EQ(imported->outputs.size(), 1u);
  EXPECT_EQ(imported->outputs[0].dtype(), v1::FLOAT32);
  EXPECT_EQ(std::vector<int64_t>(imported->outputs[0].shape().begin(), imported->outputs[0].shape().end()),
            (std::vector<int64_t>{-1, 3}));
}

TEST(OnnxExportTest, AnOpOrAttributeOnnxLacksIsRefusedNamingTheNode) {
  v1::Graph graph = Cnn();
  graph.mutable_nodes(1)->set_op_type("ReluGrad");  // a training op: the server's, not ONNX's
  auto refused = ExportOnnx(graph, {Info(v1::FLOAT32, {-1, 3})});
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find(graph.nodes(1).name()), std::string::npos) << refused.status();
  EXPECT_NE(refused.status().message().find("ReluGrad"), std::string::npos) << refused.status();

  graph = Cnn();
  (*graph.mutable_nodes(0)->mutable_attributes())["fused_activation"] = AttrString("relu");
  refused = ExportOnnx(graph, {Info(v1::FLOAT32, {-1, 3})});
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("attribute \"fused_activation\""), std::string::npos) << refused.status();
  EXPECT_EQ(ExportOnnx(Cnn(), {}).status().code(), absl::StatusCode::kInternal);  // an output without a type
}

}  // namespace
}  // namespace npu::onnxio
