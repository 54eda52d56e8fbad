#include "client/graph_json.h"

#include "client/graph_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_support.h"

namespace npu::client {
namespace {

using ::testing::HasSubstr;
using testing::ScratchDir;
using testing::WriteFileBytes;

constexpr char kMlpJson[] = R"({
  "name": "tiny",
  "inputs": [{"name": "x", "dtype": "FLOAT16", "shape": [4, "8"]}],
  "initializers": [{"name": "w", "tensor": {"dtype": "FLOAT16", "shape": [1], "data": "ADw="}}],
  "nodes": [{"name": "mm", "opType": "MatMul", "inputs": ["x", "w"], "outputs": ["y"],
             "attributes": {"alpha": {"f": 1.0}}}],
  "outputs": ["y"]
})";

TEST(GraphJsonTest, LoadsProtobufJsonMapping) {
  ScratchDir dir;
  const std::string path = dir.File("g.json");
  WriteFileBytes(path, kMlpJson);
  absl::StatusOr<npu::v1::Graph> graph = LoadGraphJson(path);
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(graph->name(), "tiny");
  EXPECT_EQ(graph->inputs(0).dtype(), npu::v1::FLOAT16);
  EXPECT_EQ(graph->inputs(0).shape(1), 8);
  EXPECT_EQ(graph->initializers(0).tensor().data(), std::string("\x00\x3c", 2));
  EXPECT_EQ(graph->nodes(0).op_type(), "MatMul");
  EXPECT_FLOAT_EQ(graph->nodes(0).attributes().at("alpha").f(), 1.0f);
}

TEST(GraphJsonTest, ErrorsNameTheFileAndTheProblem) {
  ScratchDir dir;
  const std::string path = dir.File("broken.json");
  WriteFileBytes(path, R"({"name": "x", "nodez": []})");
  absl::StatusOr<npu::v1::Graph> graph = LoadGraphJson(path);
  ASSERT_FALSE(graph.ok());
  EXPECT_EQ(graph.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(graph.status().message()), HasSubstr(path));
  EXPECT_THAT(std::string(graph.status().message()), HasSubstr("nodez"));

  WriteFileBytes(path, R"({"name": "x", "inputs": [{"dtype": "FLOAT99"}]})");
  EXPECT_THAT(std::string(LoadGraphJson(path).status().message()), HasSubstr("FLOAT99"));

  WriteFileBytes(path, "{ not json");
  EXPECT_FALSE(LoadGraphJson(path).ok());

  EXPECT_EQ(LoadGraphJson(dir.File("missing.json")).status().code(), absl::StatusCode::kNotFound);
}

TEST(GraphJsonTest, BuilderGraphRoundTripsThroughJson) {
  GraphBuilder g("rt");
  Value x = g.Input("x", npu::v1::FLOAT32, {2, 2});
  g.Output(g.Relu(x), "y");
  const npu::v1::Graph graph = g.Build();
  absl::StatusOr<std::string> json = GraphToJson(graph);
  ASSERT_TRUE(json.ok());
  absl::StatusOr<npu::v1::Graph> back = ParseGraphJson(*json, "memory");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->SerializeAsString(), graph.SerializeAsString());
}

}  // namespace
}  // namespace npu::client
