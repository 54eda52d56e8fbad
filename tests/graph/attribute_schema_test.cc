// The planner checks every node's attributes against its op's schema
// (OpDef::attributes) before the op's inference runs.
#include <set>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "server/graph/op_registry.h"
#include "tests/graph/plan_runner.h"

namespace npu::graph {
namespace {

// y = op(x), x: FLOAT32[2, 3], with `attr` set on the node.
absl::Status PlanWith(const std::string& op, const std::string& name, const v1::AttributeValue& attr) {
  // std::string arguments: GCC 12 warns falsely (-Wrestrict) on the const char* setters here.
  const std::string xs = "x", ys = "y";
  v1::Graph g;
  v1::ValueInfo* x = g.add_inputs();
  x->set_name(xs);
  x->set_dtype(v1::FLOAT32);
  x->add_shape(2);
  x->add_shape(3);
  v1::Node* n = g.add_nodes();
  n->set_name(std::string("n"));
  n->set_op_type(op);
  n->add_inputs(xs);
  n->add_outputs(ys);
  (*n->mutable_attributes())[name] = attr;
  g.add_outputs(ys);
  return BuildPlan(std::make_shared<const v1::Graph>(g), testing::DeviceFor().preset()).status();
}

v1::AttributeValue I(int64_t v) {
  v1::AttributeValue a;
  a.set_i(v);
  return a;
}
v1::AttributeValue F(float v) {
  v1::AttributeValue a;
  a.set_f(v);
  return a;
}
v1::AttributeValue S(const std::string& v) {
  v1::AttributeValue a;
  a.set_s(v);
  return a;
}

void ExpectRefused(const absl::Status& s, const std::string& what) {
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), what)) << s;
}

TEST(AttributeSchemaTest, AnUndeclaredAttributeIsRefusedByName) {
  ExpectRefused(PlanWith("Relu", "alpha", F(0.1f)), "node \"n\" (Relu): unknown attribute \"alpha\"");
  // Even one the op would never read on this path (Dropout's seed is declared; a typo is not).
  ExpectRefused(PlanWith("Dropout", "sead", I(1)), "unknown attribute \"sead\"");
}

TEST(AttributeSchemaTest, ADeclaredAttributeOfAnotherKindIsRefused) {
  ExpectRefused(PlanWith("Softmax", "axis", S("last")), "node \"n\" (Softmax): attribute \"axis\" must be an integer");
  // The op reads epsilon only when it runs; the schema catches the wrong kind at registration.
  ExpectRefused(PlanWith("LeakyRelu", "alpha", S("0.1")), "attribute \"alpha\" must be a float");
}

TEST(AttributeSchemaTest, AnIntegerServesAFloat) {
  EXPECT_TRUE(PlanWith("LeakyRelu", "alpha", I(1)).ok());
  EXPECT_TRUE(PlanWith("LeakyRelu", "alpha", F(0.5f)).ok());
}

TEST(AttributeSchemaTest, AStringOutsideItsChoicesIsRefused) {
  EXPECT_TRUE(PlanWith("Gelu", "approximate", S("tanh")).ok());
  ExpectRefused(PlanWith("Gelu", "approximate", S("fast")),
                "node \"n\" (Gelu): attribute \"approximate\" = \"fast\" is not supported (none, tanh)");
}

TEST(AttributeSchemaTest, SchemasNameEachAttributeOnceAndShapeInputsExist) {
  for (const OpDef* op : OpRegistry::Global().All()) {
    std::set<std::string> names;
    for (const AttrDef& a : op->attributes) {
      EXPECT_TRUE(names.insert(a.name).second) << op->name << " declares " << a.name << " twice";
      EXPECT_TRUE(a.choices.empty() || a.kind == AttrKind::kString) << op->name << "." << a.name;
    }
    for (int i : op->shape_inputs) EXPECT_TRUE(i >= 0 && i < op->max_inputs) << op->name << " input " << i;
  }
}

}  // namespace
}  // namespace npu::graph
