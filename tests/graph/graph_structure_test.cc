// Single assignment and structure (server/graph/graph_structure.h) on every
// path a graph takes: inline (initializers in the graph), a registered
// model's structure with its weights apart (where an unread initializer's
// name was once free to reuse), and through the import-time passes (where a
// node without outputs was dead, removed, and so never refused).
#include "server/graph/graph_structure.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/graph/passes/prepare_graph.h"
#include "server/graph/plan.h"

namespace npu::graph {
namespace {

using ::testing::HasSubstr;

const device::DevicePreset& Preset() {
  static const device::DevicePreset p = device::PresetByName("ascend910").value();
  return p;
}

v1::Graph Base() {
  v1::Graph g;
  v1::ValueInfo* in = g.add_inputs();
  in->set_name("x");
  in->set_dtype(v1::FLOAT32);
  in->add_shape(4);
  v1::Initializer* w = g.add_initializers();
  w->set_name("w");
  w->mutable_tensor()->set_dtype(v1::FLOAT32);
  w->mutable_tensor()->add_shape(4);
  w->mutable_tensor()->set_data(std::string(16, '\0'));
  return g;
}

v1::Node* Add(v1::Graph& g, const std::string& name, const std::string& op, std::vector<std::string> in,
              std::vector<std::string> out) {
  v1::Node* n = g.add_nodes();
  n->set_name(name);
  n->set_op_type(op);
  for (auto& i : in) n->add_inputs(i);
  for (auto& o : out) n->add_outputs(o);
  return n;
}

// The error of every path: the check itself, BuildPlan, and PreparePlan (passes first).
std::vector<std::string> Errors(const v1::Graph& g) {
  std::vector<std::string> out;
  out.emplace_back(CheckGraphStructure(g).message());
  out.emplace_back(BuildPlan(std::make_shared<const v1::Graph>(g), Preset()).status().message());
  out.emplace_back(PreparePlan(std::make_shared<const v1::Graph>(g), nullptr, Preset(), {}).status().message());
  return out;
}

TEST(GraphStructureTest, EveryValueIsDefinedOnceNamingTheFirstDefiner) {
  {
    v1::Graph g = Base();
    Add(g, "relu", "Relu", {"x"}, {"w"});  // nothing reads the initializer "w"
    Add(g, "neg", "Neg", {"x"}, {"y"});
    g.add_outputs("y");
    for (const std::string& e : Errors(g)) {
      EXPECT_THAT(e, HasSubstr("node \"relu\" (Relu) output: value \"w\" is defined more than once (first by an "
                               "initializer)"));
    }
  }
  {
    v1::Graph g = Base();
    Add(g, "a", "Relu", {"x"}, {"y"});
    Add(g, "b", "Neg", {"x"}, {"y"});
    g.add_outputs("y");
    for (const std::string& e : Errors(g)) {
      EXPECT_THAT(e, HasSubstr("node \"b\" (Neg) output: value \"y\" is defined more than once (first by node "
                               "\"a\" (Relu))"));
    }
  }
  {
    v1::Graph g = Base();
    Add(g, "a", "Relu", {"x"}, {"x"});
    g.add_outputs("x");
    for (const std::string& e : Errors(g)) EXPECT_THAT(e, HasSubstr("(first by a graph input)"));
  }
}

TEST(GraphStructureTest, AnUnreadInitializerOfTheWeightsStillTakesItsName) {
  // A registered model: its structure after the passes, its initializers apart.
  auto weights = std::make_shared<const v1::Graph>(Base());
  v1::Graph structure;
  *structure.mutable_inputs() = weights->inputs();
  Add(structure, "relu", "Relu", {"x"}, {"w"});
  structure.add_outputs("w");
  auto plan = BuildPlan(std::make_shared<const v1::Graph>(structure), Preset(), {}, {}, weights);
  EXPECT_THAT(plan.status().message(), HasSubstr("value \"w\" is defined more than once (first by an initializer)"));
}

TEST(GraphStructureTest, EveryNodeHasTheOutputsItsOpRequires) {
  v1::Graph g = Base();
  Add(g, "dead", "Relu", {"x"}, {});  // dead code: the passes once removed it unseen
  Add(g, "neg", "Neg", {"x"}, {"y"});
  g.add_outputs("y");
  for (const std::string& e : Errors(g)) EXPECT_THAT(e, HasSubstr("node \"dead\" (Relu): defines 0 outputs"));
  v1::Graph empty_name = Base();
  Add(empty_name, "n", "Relu", {"x"}, {""});
  empty_name.add_outputs("w");
  for (const std::string& e : Errors(empty_name)) EXPECT_THAT(e, HasSubstr("node \"n\" (Relu) output has an empty name"));
}

TEST(GraphStructureTest, UnnamedNodesAreNamedAsThePlannerNamesThem) {
  v1::Graph g = Base();
  Add(g, "", "Relu", {"x"}, {"y"});
  Add(g, "", "Neg", {"q"}, {"z"});
  g.add_outputs("z");
  EXPECT_THAT(CheckGraphStructure(g).message(), HasSubstr("node \"Neg_1\" (Neg): input 0 \"q\" is not defined"));
  v1::Graph ok = Base();
  Add(ok, "", "Relu", {"x"}, {"y"});
  Add(ok, "", "Neg", {"y"}, {"z"});
  ok.add_outputs("z");
  EXPECT_TRUE(CheckGraphStructure(ok).ok());
}

}  // namespace
}  // namespace npu::graph
