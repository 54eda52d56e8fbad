// BuildPlan's own checks (the ops' checks are tested op by op): names, arity,
// cycles, outputs, sizes, the order nodes run in, and per-value storage.
#include "server/graph/plan.h"

#include "client/graph_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace npu::graph {
namespace {

using ::testing::HasSubstr;

const device::DevicePreset& Preset() {
  static const device::DevicePreset p = device::PresetByName("ascend910").value();
  return p;
}

// Without fusion: these tests look at the nodes and values of the graph as
// given (fusion has its own tests, fusion_test.cc).
absl::StatusOr<std::shared_ptr<const Plan>> Plan(const v1::Graph& g, PlanLimits limits = {}) {
  return BuildPlan(std::make_shared<const v1::Graph>(g), Preset(), limits, PlanOptions{.fuse = false});
}

v1::Node* AddNode(v1::Graph& g, const std::string& name, const std::string& op, std::vector<std::string> in,
                  std::vector<std::string> out) {
  v1::Node* n = g.add_nodes();
  n->set_name(name);
  n->set_op_type(op);
  for (auto& i : in) n->add_inputs(i);
  for (auto& o : out) n->add_outputs(o);
  return n;
}

v1::Graph WithInput(const std::string& name = "x", std::vector<int64_t> shape = {4}) {
  v1::Graph g;
  v1::ValueInfo* in = g.add_inputs();
  in->set_name(name);
  in->set_dtype(v1::FLOAT32);
  for (int64_t d : shape) in->add_shape(d);
  return g;
}

std::string Error(const v1::Graph& g, PlanLimits limits = {}) {
  auto p = Plan(g, limits);
  EXPECT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(p.status().message());
}

TEST(PlanTest, NodesRunInDependencyOrderWhateverTheirOrderInTheGraph) {
  v1::Graph g = WithInput();
  AddNode(g, "last", "Relu", {"b"}, {"c"});
  AddNode(g, "first", "Relu", {"x"}, {"a"});
  AddNode(g, "middle", "Relu", {"a"}, {"b"});
  g.add_outputs("c");
  auto p = Plan(g);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ((*p)->nodes.size(), 3u);
  EXPECT_EQ((*p)->nodes[0].node->name(), "first");
  EXPECT_EQ((*p)->nodes[1].node->name(), "middle");
  EXPECT_EQ((*p)->nodes[2].node->name(), "last");
  EXPECT_EQ((*p)->values[(*p)->outputs[0]].type, (TensorType{v1::FLOAT32, {4}}));
}

TEST(PlanTest, UnnamedNodesAreNamedByOpAndPosition) {
  v1::Graph g = WithInput();
  AddNode(g, "", "Relu", {"x"}, {"a"});
  AddNode(g, "", "Foo", {"a"}, {"b"});
  g.add_outputs("b");
  EXPECT_THAT(Error(g), HasSubstr("node \"Foo_1\" (Foo): unknown op type \"Foo\""));
}

TEST(PlanTest, StructuralFaultsAreNamed) {
  {
    v1::Graph g = WithInput();
    AddNode(g, "r", "Relu", {"x"}, {"a"});
    EXPECT_THAT(Error(g), HasSubstr("graph has no outputs"));
  }
  {
    v1::Graph g = WithInput();
    AddNode(g, "r", "Relu", {"nope"}, {"a"});
    g.add_outputs("a");
    EXPECT_THAT(Error(g), HasSubstr("node \"r\" (Relu): input 0 \"nope\" is not defined"));
  }
  {
    v1::Graph g = WithInput();
    AddNode(g, "r", "Relu", {"x"}, {"x"});
    g.add_outputs("x");
    EXPECT_THAT(Error(g), HasSubstr("value \"x\" is defined more than once"));
  }
  {
    v1::Graph g = WithInput();
    AddNode(g, "p", "Relu", {"b"}, {"a"});
    AddNode(g, "q", "Relu", {"a"}, {"b"});
    g.add_outputs("b");
    EXPECT_THAT(Error(g), HasSubstr("graph has a cycle through nodes \"p\", \"q\""));
  }
  {
    v1::Graph g = WithInput();
    AddNode(g, "s", "Relu", {"a"}, {"a"});
    g.add_outputs("a");
    EXPECT_THAT(Error(g), HasSubstr("is its own output (self-loop)"));
  }
  {
    v1::Graph g = WithInput();
    AddNode(g, "r", "Relu", {"x"}, {"a"});
    AddNode(g, "r", "Relu", {"a"}, {"b"});
    g.add_outputs("b");
    EXPECT_THAT(Error(g), HasSubstr("node name \"r\" is used more than once"));
  }
  {
    v1::Graph g = WithInput();
    AddNode(g, "add", "Add", {"x"}, {"a"});
    g.add_outputs("a");
    EXPECT_THAT(Error(g), HasSubstr("node \"add\" (Add): takes 2 inputs, got 1"));
  }
  {
    v1::Graph g = WithInput();
    AddNode(g, "r", "Relu", {"x"}, {"a"});
    g.add_outputs("a");
    g.add_outputs("a");
    EXPECT_THAT(Error(g), HasSubstr("graph output \"a\" is listed more than once"));
    g.clear_outputs();
    g.add_outputs("zzz");
    EXPECT_THAT(Error(g), HasSubstr("graph output \"zzz\" is not defined"));
  }
}

TEST(PlanTest, LimitsOnNodesAndTensorBytesHold) {
  v1::Graph g = WithInput("x", {1024});
  AddNode(g, "a", "Relu", {"x"}, {"y"});
  AddNode(g, "b", "Relu", {"y"}, {"z"});
  g.add_outputs("z");
  EXPECT_THAT(Error(g, PlanLimits{1, uint64_t{1} << 30}), HasSubstr("graph has 2 nodes; the limit is 1"));
  EXPECT_THAT(Error(g, PlanLimits{10, 1000}), HasSubstr("4096 bytes; the limit is 1000"));
}

TEST(PlanTest, AnInferredShapeWhoseSizeOverflowsIsRefused) {
  // Expand of one element to [2^32, 2^32]: 2^64 elements wrap to 0 in int64.
  v1::Graph g = WithInput("x", {1});
  v1::Initializer* shape = g.add_initializers();
  shape->set_name("shape");
  shape->mutable_tensor()->set_dtype(v1::INT64);
  shape->mutable_tensor()->add_shape(2);
  const int64_t dims[2] = {int64_t{1} << 32, int64_t{1} << 32};
  shape->mutable_tensor()->set_data(reinterpret_cast<const char*>(dims), sizeof(dims));
  AddNode(g, "big", "Expand", {"x", "shape"}, {"y"});
  g.add_outputs("y");
  const std::string e = Error(g);
  EXPECT_THAT(e, HasSubstr("\"big\""));
}

TEST(PlanTest, EveryValueHasAStorageAndArenaValuesFitTheArena) {
  client::GraphBuilder b("mlp");
  auto x = b.Input("x", v1::FLOAT32, {8, 16});
  auto h = b.Relu(b.Relu(x));
  b.Output(b.Op("Reshape", {b.Relu(h), b.Constant("s", [] {
                   v1::Tensor t;
                   t.set_dtype(v1::INT64);
                   t.add_shape(1);
                   const int64_t n = 128;
                   t.set_data(reinterpret_cast<const char*>(&n), sizeof(n));
                   return t;
                 }())}),
           "y");
  auto p = Plan(b.Build());
  ASSERT_TRUE(p.ok()) << p.status();
  int arena = 0, heap = 0, view = 0;
  for (const PlanValue& v : (*p)->values) {
    switch (v.storage) {
      case ValueStorage::kArena:
        ++arena;
        EXPECT_LE(static_cast<uint64_t>(v.arena_offset) + v.type.bytes(), (*p)->arena_bytes);
        break;
      case ValueStorage::kHeap: ++heap; break;
      case ValueStorage::kView: ++view; break;
      default: break;
    }
  }
  EXPECT_EQ(arena, 2);  // the first two Relus
  EXPECT_EQ(heap, 1);   // the last Relu: the output is a view of it
  EXPECT_EQ(view, 1);   // the Reshape
}

}  // namespace
}  // namespace npu::graph
