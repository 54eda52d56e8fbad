// Pad, Tile, ConstantOfShape, Range and Resize refuse what they cannot run at
// plan time, with INVALID_ARGUMENT naming the node and what is wrong, before
// anything is allocated (a pad or repeat that would make a huge output is a
// size error, not an allocation).
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/graph/one_node.h"
#include "tests/graph/plan_error.h"

namespace npu::graph {
namespace {

using ::testing::HasSubstr;
using testing::OneNode;
using testing::PlanError;

OneNode Pad(std::vector<double> pads, Shape x = {2, 3}) {
  return std::move(
      OneNode("Pad").Input("x", v1::FLOAT32, x, std::vector<double>(static_cast<size_t>(x[0] * x[1]), 1))
          .Const("p", v1::INT64, {static_cast<int64_t>(pads.size())}, pads));
}

TEST(ShapeOpsErrorsTest, PadNamesItsBadPads) {
  EXPECT_THAT(PlanError(Pad({1, 1, 1})), HasSubstr("input \"p\" has 3 entries; 2 axes need 4"));
  EXPECT_THAT(PlanError(Pad({-2, 0, -2, 0})), HasSubstr("crop axis 0 of size 2 below zero"));
  EXPECT_THAT(PlanError(Pad({1e12, 1e12, 1e12, 1e12})), HasSubstr("the padded output"));
  EXPECT_THAT(PlanError(Pad({0, 1e15, 0, 1e15})), HasSubstr("pad 1000000000000000 is outside [-1099511627776, 1099511627776]"));
  EXPECT_THAT(PlanError(Pad({0, 0, 0, 0}).Str("mode", "mirror")), HasSubstr("\"mode\""));
  EXPECT_THAT(PlanError(Pad({1, 0, 0, 0}, {0, 3}).Str("mode", "reflect")),
              HasSubstr("axis 0 is empty: mode \"reflect\" has no element to repeat"));
  EXPECT_THAT(PlanError(Pad({0, 0, 0, 0}).Input("v", v1::INT64, {}, {1})),
              HasSubstr("constant_value is INT64, data is FLOAT32"));
  EXPECT_THAT(PlanError(Pad({0, 0}).Const("v", v1::FLOAT32, {2}, {1, 2}).Const("a", v1::INT64, {1}, {1})),
              HasSubstr("constant_value must be a scalar"));
  EXPECT_THAT(PlanError(OneNode("Pad").Input("x", v1::FLOAT32, {2}, {1, 2}).Input("p", v1::INT64, {2}, {1, 1})),
              HasSubstr("input \"p\" must be a constant"));
  EXPECT_THAT(PlanError(Pad({0, 0}).None().Const("a", v1::INT64, {1}, {2})), HasSubstr("out of range"));
}

TEST(ShapeOpsErrorsTest, TileNamesItsBadRepeats) {
  auto tile = [](std::vector<double> r) {
    return OneNode("Tile").Input("x", v1::FLOAT32, {2, 3}, {1, 2, 3, 4, 5, 6}).Const(
        "r", v1::INT64, {static_cast<int64_t>(r.size())}, r);
  };
  EXPECT_THAT(PlanError(tile({2})), HasSubstr("has 1 entries for input rank 2"));
  EXPECT_THAT(PlanError(tile({2, -1})), HasSubstr("repeat -1 of axis 1 is negative"));
  EXPECT_THAT(PlanError(tile({1, 4e18})), HasSubstr("overflows"));
  EXPECT_THAT(PlanError(tile({1e6, 1e6})), HasSubstr("the tiled output"));
}

TEST(ShapeOpsErrorsTest, ConstantOfShapeNamesItsBadShapeAndValue) {
  auto cos = [](std::vector<double> s) {
    return OneNode("ConstantOfShape").Const("s", v1::INT64, {static_cast<int64_t>(s.size())}, s);
  };
  EXPECT_THAT(PlanError(cos({2, -1})), HasSubstr("input \"s\""));
  EXPECT_THAT(PlanError(cos({2}).Tensor("value", v1::FLOAT32, {2}, {1, 2})),
              HasSubstr("attribute \"value\" must hold exactly one element"));
  EXPECT_THAT(PlanError(cos({2}).Int("value", 3)), HasSubstr("\"value\""));
  EXPECT_THAT(PlanError(cos({1 << 20, 1 << 20})), HasSubstr("bytes"));
}

TEST(ShapeOpsErrorsTest, RangeNamesItsBadBounds) {
  auto range = [](DataType t, double a, double b, double d) {
    return OneNode("Range").Const("a", t, {}, {a}).Const("b", t, {}, {b}).Const("d", t, {}, {d});
  };
  EXPECT_THAT(PlanError(range(v1::INT64, 0, 5, 0)), HasSubstr("input \"d\": delta is 0"));
  EXPECT_THAT(PlanError(range(v1::FLOAT32, 0, 5, 0)), HasSubstr("input \"d\": delta is 0"));
  EXPECT_THAT(PlanError(range(v1::INT64, -4e18, 4e18, 1)), HasSubstr("elements; at most"));
  EXPECT_THAT(PlanError(range(v1::FLOAT32, 0, INFINITY, 1)), HasSubstr("must be finite"));
  EXPECT_THAT(PlanError(range(v1::FLOAT32, 0, 1e30, 1e-30)), HasSubstr("elements; at most"));
  EXPECT_THAT(PlanError(OneNode("Range").Const("a", v1::INT64, {}, {0}).Const("b", v1::INT32, {}, {3}).Const(
                  "d", v1::INT64, {}, {1})),
              HasSubstr("must have one dtype"));
  EXPECT_THAT(PlanError(OneNode("Range").Const("a", v1::INT64, {2}, {0, 1}).Const("b", v1::INT64, {}, {3}).Const(
                  "d", v1::INT64, {}, {1})),
              HasSubstr("input \"a\" must be a scalar"));
  EXPECT_THAT(PlanError(OneNode("Range").Input("a", v1::INT64, {}, {0}).Const("b", v1::INT64, {}, {3}).Const(
                  "d", v1::INT64, {}, {1})),
              HasSubstr("input \"a\" must be a constant"));
}

TEST(ShapeOpsErrorsTest, ResizeNamesWhatItDoesNotRun) {
  auto resize = [](const std::string& mode) {
    return OneNode("Resize").Input("x", v1::FLOAT32, {1, 1, 2, 2}, {1, 2, 3, 4}).Const("roi", v1::FLOAT32, {0}, {})
        .Str("mode", mode);
  };
  EXPECT_THAT(PlanError(resize("linear").None()), HasSubstr("give exactly one of scales"));
  EXPECT_THAT(PlanError(resize("linear").Const("s", v1::FLOAT32, {4}, {1, 1, 2, 2}).Const("z", v1::INT64, {4},
                                                                                          {1, 1, 4, 4})),
              HasSubstr("not both"));
  EXPECT_THAT(PlanError(resize("cubic").Const("s", v1::FLOAT32, {4}, {1, 1, 2, 2})),
              HasSubstr("\"cubic\" is not supported"));
  EXPECT_THAT(PlanError(resize("linear").Const("s", v1::FLOAT32, {4}, {1, 1, 0, 2})),
              HasSubstr("scale 0 of axis 2 must be positive"));
  EXPECT_THAT(PlanError(resize("linear").Const("s", v1::FLOAT32, {3}, {1, 1, 2})),
              HasSubstr("has 3 entries for 4 axes"));
  EXPECT_THAT(PlanError(resize("nearest").None().Const("z", v1::INT64, {4}, {1, 1, -4, 4})),
              HasSubstr("size -4 of axis 2 is negative"));
  EXPECT_THAT(PlanError(resize("nearest").None().Const("z", v1::INT64, {4}, {1, 1, 1 << 20, 1 << 20})),
              HasSubstr("the resized output"));
  EXPECT_THAT(PlanError(resize("linear").Const("s", v1::FLOAT32, {4}, {1, 1, 2, 2}).Str(
                  "coordinate_transformation_mode", "tf_crop_and_resize")),
              HasSubstr("is not supported"));
  EXPECT_THAT(PlanError(OneNode("Resize").Input("x", v1::INT32, {1, 2}, {1, 2}).Const("roi", v1::FLOAT32, {0}, {})
                            .Const("s", v1::FLOAT32, {2}, {1, 2}).Str("mode", "linear")),
              HasSubstr("mode linear needs FLOAT16 or FLOAT32"));
  EXPECT_THAT(PlanError(resize("linear").Input("s", v1::FLOAT32, {4}, {1, 1, 2, 2})),
              HasSubstr("input \"s\" must be a constant"));
}

}  // namespace
}  // namespace npu::graph
