#include "client/cli/overflow_warning.h"

#include <sstream>

#include <gtest/gtest.h>

namespace npu::client::cli {
namespace {

npu::v1::NodeProfile* AddNode(npu::v1::Profile& p, const char* name, const char* op, uint64_t overflow,
                              std::vector<int64_t> out_shape) {
  npu::v1::NodeProfile* n = p.add_nodes();
  n->set_name(name);
  n->set_op_type(op);
  n->set_overflow_elements(overflow);
  if (!out_shape.empty()) {
    npu::v1::TensorDesc* t = n->add_outputs();
    for (int64_t d : out_shape) t->add_shape(d);
  }
  return n;
}

TEST(WarnAboutOverflow, OneLinePerOverflowingNodeThenTheAlarm) {
  npu::v1::Profile p;
  p.set_preset("ascend910");
  AddNode(p, "fc1", "MatMul", 12, {4, 10});
  AddNode(p, "relu", "Relu", 0, {4, 10});
  AddNode(p, "sq", "Mul", 1, {});  // no shapes described: no "of N"
  std::ostringstream out;
  EXPECT_EQ(WarnAboutOverflow(p, out), 2);
  EXPECT_EQ(out.str(),
            "warning: overflow in node \"fc1\" (MatMul): 12 of 40 results saturated to +-65504 or became inf/NaN\n"
            "warning: overflow in node \"sq\" (Mul): 1 results saturated to +-65504 or became inf/NaN\n"
            "warning: 2 nodes overflowed on ascend910 (msprof's overflow alarm): later ops computed on clipped "
            "values. Scale the inputs, keep the op in float32 (Cast), or, when training, lower the loss scale\n");
}

TEST(WarnAboutOverflow, NothingWhenNothingOverflowed) {
  npu::v1::Profile p;
  AddNode(p, "fc1", "MatMul", 0, {4, 10});
  std::ostringstream out;
  EXPECT_EQ(WarnAboutOverflow(p, out), 0);
  EXPECT_EQ(out.str(), "");
}

}  // namespace
}  // namespace npu::client::cli
