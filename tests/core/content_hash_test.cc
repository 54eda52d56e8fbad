// A registered graph's content hash is taken as its deterministic bytes are
// written (DeterministicSha256Hex), never holding them: the same hash as of
// the bytes whole, which the clients compute.
#include "base/deterministic_bytes.h"

#include "client/graph_builder.h"
#include "gtest/gtest.h"

namespace npu {
namespace {

TEST(ContentHashTest, HashingWhileWritingIsTheHashOfTheWholeBytes) {
  client::GraphBuilder g("chain");
  client::Value x = g.Input("x", v1::FLOAT32, {4});
  // Past the 64 KiB the hash is fed at a time, with attributes in maps.
  for (int i = 0; i < 2000; ++i) x = g.Op("Relu", {x}, {{"note", client::AttrString("node " + std::to_string(i))}});
  g.Output(x, "y");
  const v1::Graph graph = g.Build();
  ASSERT_GT(graph.ByteSizeLong(), 64u << 10);
  EXPECT_EQ(DeterministicSha256Hex(graph), Sha256Hex(DeterministicBytes(graph)));
  EXPECT_EQ(DeterministicSha256Hex(v1::Graph()), Sha256Hex(""));
}

}  // namespace
}  // namespace npu
