// What autodiff refuses, and how: every node the gradient cannot pass is
// named at once (its name, op and why), and so is a value asked for that
// reaches the loss only through values that are not float; values that leave
// the floats beside a float path (a comparison feeding a Where's condition,
// ArgMax feeding indices) are no error.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/train/autodiff.h"
#include "server/train/graph_editor.h"
#include "tests/train/train_test_support.h"

namespace npu::train {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::AddNode;

void Input(v1::Graph& g, const std::string& name, std::vector<int64_t> shape, v1::DataType dtype = v1::FLOAT32) {
  v1::ValueInfo* in = g.add_inputs();
  in->set_name(name);
  in->set_dtype(dtype);
  for (int64_t d : shape) in->add_shape(d);
}

absl::StatusOr<std::vector<std::string>> Backward(v1::Graph g, std::vector<std::string> wrt) {
  return AppendBackward(g, {"loss", "dloss", std::move(wrt)}, testing::DeviceFor("ascend910").preset());
}

TEST(AutodiffRefusalTest, NamesEveryNodeWithoutAGradientAtOnce) {
  // w -> Mul -> Hardmax -> Add <- ArgMax(v) as float; the loss sums it.
  // Three problems: Hardmax has no rule, the ScatterND's reduction has none,
  // and v reaches the loss only through ArgMax's INT64 output.
  v1::Graph g;
  Input(g, "x", {4, 5});
  Input(g, "w", {4, 5});
  Input(g, "v", {4, 5});
  Input(g, "u", {2, 5});
  Input(g, "rows", {2, 1}, v1::INT64);
  AddNode(g, "scale", "Mul", {"x", "w"}, {"t"});
  AddNode(g, "hard", "Hardmax", {"t"}, {"h"});
  AddNode(g, "scatter", "ScatterND", {"h", "rows", "u"}, {"s"}, {{"reduction", AttrString("mul")}});
  AddNode(g, "pick", "ArgMax", {"v"}, {"idx"}, {{"axis", AttrInt(1)}, {"keepdims", AttrInt(1)}});
  AddNode(g, "as_float", "Cast", {"idx"}, {"f"}, {{"to", AttrInt(1)}});
  AddNode(g, "add", "Add", {"s", "f"}, {"a"});
  AddNode(g, "sum", "ReduceSum", {"a"}, {"loss"}, {{"keepdims", AttrInt(0)}});
  auto r = Backward(g, {"w", "v", "u"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string m(r.status().message());
  EXPECT_THAT(m, HasSubstr("3 problems"));
  EXPECT_THAT(m, HasSubstr("node \"hard\" (Hardmax): the op has no gradient"));
  EXPECT_THAT(m, HasSubstr("node \"scatter\" (ScatterND): cannot differentiate with reduction mul"));
  EXPECT_THAT(m, HasSubstr("\"v\" reaches the loss only through values that are not float"));
  EXPECT_THAT(m, HasSubstr("node \"pick\" (ArgMax, output INT64)"));
}

TEST(AutodiffRefusalTest, IntegerAndBoolPathsBesideTheFloatOnesAreNoError) {
  // y = Where(x > w, w * x, 0) + GatherElements(x, ArgMax(w)): the
  // comparison, the condition and the indices pass no gradient and need none.
  v1::Graph g;
  Input(g, "x", {3, 4});
  Input(g, "w", {3, 4});
  GraphEditor e(&g);
  const std::string zero = e.ScalarConstant("zero", 0.0f, v1::FLOAT32);
  AddNode(g, "cmp", "Greater", {"x", "w"}, {"cond"});
  AddNode(g, "mul", "Mul", {"w", "x"}, {"wx"});
  AddNode(g, "where", "Where", {"cond", "wx", zero}, {"y"});
  AddNode(g, "pick", "ArgMax", {"w"}, {"idx"}, {{"axis", AttrInt(1)}, {"keepdims", AttrInt(1)}});
  AddNode(g, "gather", "GatherElements", {"x", "idx"}, {"xg"}, {{"axis", AttrInt(1)}});
  AddNode(g, "add", "Add", {"y", "xg"}, {"z"});
  AddNode(g, "sum", "ReduceSum", {"z"}, {"loss"}, {{"keepdims", AttrInt(0)}});
  auto r = Backward(g, {"w"});
  EXPECT_TRUE(r.ok()) << r.status();
}

TEST(AutodiffRefusalTest, AFlatOpGivesAZeroGradientNotAnError) {
  // Floor's derivative is 0 almost everywhere (torch's too): w gets zeros.
  v1::Graph g;
  Input(g, "w", {2, 3});
  AddNode(g, "floor", "Floor", {"w"}, {"f"});
  AddNode(g, "sum", "ReduceSum", {"f"}, {"loss"}, {{"keepdims", AttrInt(0)}});
  auto r = Backward(g, {"w"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT((*r)[0], AllOf(HasSubstr("zero"), Not(HasSubstr("floor"))));
}

}  // namespace
}  // namespace npu::train
