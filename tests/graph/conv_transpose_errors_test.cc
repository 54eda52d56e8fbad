// ConvTranspose refuses what it cannot run at plan time with INVALID_ARGUMENT
// naming the node and the attribute, input or value (results are checked
// against torch in ops_torch_test; ONNX's cases in onnx_conformance_test).
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/graph/one_node.h"
#include "tests/graph/plan_error.h"

namespace npu::graph {
namespace {

using ::testing::HasSubstr;
using testing::OneNode;
using testing::PlanError;

// x [1, 4, 3, 3], w [4, 2, kh, kw].
OneNode ConvT(Shape w = {4, 2, 3, 3}, Shape x = {1, 4, 3, 3}) {
  int64_t nx = 1, nw = 1;
  for (int64_t d : x) nx *= d;
  for (int64_t d : w) nw *= d;
  return std::move(OneNode("ConvTranspose")
                       .Input("x", v1::FLOAT32, x, std::vector<double>(static_cast<size_t>(nx), 0.5))
                       .Const("w", v1::FLOAT32, w, std::vector<double>(static_cast<size_t>(nw), 0.25)));
}

TEST(ConvTransposeErrorsTest, NamesWhatIsWrong) {
  EXPECT_THAT(PlanError(ConvT({4, 2, 3, 3, 1, 1}, {1, 4, 3, 3, 1, 1})),
              HasSubstr("is not supported: only 1-D, 2-D and 3-D"));
  EXPECT_THAT(PlanError(ConvT({3, 2, 3, 3})), HasSubstr("need 4 rows (the input channels"));
  EXPECT_THAT(PlanError(ConvT().Int("group", 3)), HasSubstr("\"group\" = 3 must divide the input channels 4"));
  EXPECT_THAT(PlanError(ConvT().Ints("strides", {2})), HasSubstr("need 2 entries (one per spatial axis)"));
  EXPECT_THAT(PlanError(ConvT().Ints("kernel_shape", {3, 2})), HasSubstr("\"kernel_shape\" does not match"));
  EXPECT_THAT(PlanError(ConvT().Ints("strides", {0, 1})), HasSubstr("height: stride 0 must be >= 1"));
  EXPECT_THAT(PlanError(ConvT().Ints("dilations", {1, -1})), HasSubstr("width: dilation -1 must be >= 1"));
  EXPECT_THAT(PlanError(ConvT().Ints("pads", {0, -1, 0, 0})), HasSubstr("must be >= 0"));
  EXPECT_THAT(PlanError(ConvT().Ints("strides", {2, 2}).Ints("output_padding", {2, 0})),
              HasSubstr("output_padding 2 must be >= 0 and smaller than the stride (2) or the dilation (1)"));
  EXPECT_THAT(PlanError(ConvT().Ints("pads", {3, 0, 2, 0})), HasSubstr("leave no output of the 5"));
  EXPECT_THAT(PlanError(ConvT().Ints("output_shape", {0, 5})), HasSubstr("output extent 0 must be in [1"));
  EXPECT_THAT(PlanError(ConvT().Ints("strides", {int64_t{1} << 40, 1})), HasSubstr("exceeds"));
  EXPECT_THAT(PlanError(ConvT({4, 0, 3, 3})), HasSubstr("only the batch dimension may be 0"));
  EXPECT_THAT(PlanError(ConvT().Const("b", v1::FLOAT32, {3}, {1, 2, 3})), HasSubstr("needs 2 elements"));
  EXPECT_THAT(PlanError(ConvT().Str("auto_pad", "SAME")), HasSubstr("\"auto_pad\""));
  EXPECT_THAT(PlanError(std::move(OneNode("ConvTranspose")
                                      .Input("x", v1::FLOAT32, {1, 1, 2, 2}, {1, 2, 3, 4})
                                      .Const("w", v1::INT32, {1, 1, 1, 1}, {1}))),
              HasSubstr("must be FLOAT16 or FLOAT32 and match input X"));
}

}  // namespace
}  // namespace npu::graph
