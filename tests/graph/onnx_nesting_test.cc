// Hostile nesting in an ONNX model: subgraph attributes inside subgraphs a
// hundred thousand deep. Protobuf's parser stops at its recursion limit (100
// levels, a few dozen subgraphs), so the importer answers a clear error and
// never recurses itself; nesting within the limit is refused by the graph
// attribute's type, before anything walks it.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "onnx/onnx_import.h"

namespace npu::graph {
namespace {

using ::testing::HasSubstr;

std::string Varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out.push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
  return out;
}

std::string Field(int number, const std::string& bytes) {
  return Varint(static_cast<uint64_t>(number) << 3 | 2) + Varint(bytes.size()) + bytes;
}

// A serialized ModelProto (opset 13) whose graph's one node has a graph
// attribute whose graph's one node has a graph attribute ... `depth` times,
// written inside out so that nothing here recurses either.
std::string NestedModel(int depth) {
  std::string graph;
  for (int i = 0; i < depth; ++i) {
    const std::string attribute = Field(1, "g") + Varint(20 << 3) + Varint(5) + Field(6, graph);  // name, type GRAPH, g
    const std::string node = Field(4, "If") + Field(5, attribute);                              // op_type, attribute
    graph = Field(1, node);                                                                     // GraphProto.node
  }
  const std::string opset = Field(1, "") + Varint(2 << 3) + Varint(13);  // domain "", version 13
  return Varint(1 << 3) + Varint(8) + Field(8, opset) + Field(7, graph);  // ir_version, opset_import, graph
}

TEST(OnnxNestingTest, DeepSubgraphsAreRefusedWithoutRecursion) {
  auto deep = onnxio::ImportOnnxBytes(NestedModel(2000));
  EXPECT_EQ(deep.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(deep.status().message(), HasSubstr("not a valid onnx.ModelProto"));
  auto shallow = onnxio::ImportOnnxBytes(NestedModel(20));
  EXPECT_EQ(shallow.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(shallow.status().message(), HasSubstr("op type \"If\" is not supported"));
}

}  // namespace
}  // namespace npu::graph
