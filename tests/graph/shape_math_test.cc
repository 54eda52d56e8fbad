// The checked shape arithmetic at its edges: int64 limits, zero and negative
// extents, scalars. Expected values are worked out by hand from the ONNX and
// torch formulas (the Slice and window tables against NumPy and torch are in
// slice_numpy_test.cc and window_torch_test.cc).
#include "server/graph/shape_math.h"

#include <cstdint>
#include <limits>

#include "gtest/gtest.h"

namespace npu::graph {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

using ::absl::StatusCode;

TEST(ShapeMathTest, MulAndAddReportOverflowNamingTheQuantity) {
  EXPECT_EQ(*CheckedMul(int64_t{1} << 31, int64_t{1} << 31, "x"), int64_t{1} << 62);
  auto m = CheckedMul(int64_t{1} << 32, int64_t{1} << 32, "the columns");
  ASSERT_EQ(m.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(m.status().message(), "the columns: 4294967296 x 4294967296 overflows int64");
  EXPECT_FALSE(CheckedMul(kMin, -1, "x").ok());
  EXPECT_EQ(*CheckedAdd(kMax, kMin, "x"), -1);
  EXPECT_FALSE(CheckedAdd(kMax, 1, "x").ok());
  EXPECT_FALSE(CheckedAdd(kMin, -1, "x").ok());
}

TEST(ShapeMathTest, ElementsOfAScalarIsOneAndAZeroDimDoesNotExcuseHugeOnes) {
  EXPECT_EQ(*CheckedElements({}, "x"), 1);
  EXPECT_EQ(*CheckedElements({1 << 20, 0, 1 << 20}, "x"), 0);
  auto hidden = CheckedElements({0, kMax, 2}, "x");
  ASSERT_FALSE(hidden.ok());
  EXPECT_EQ(hidden.status().message(),
            "x: shape [0,9223372036854775807,2] has more than 1099511627776 elements (counting only its non-zero "
            "dims)");
  EXPECT_EQ(*CheckedElements({1 << 20, 1 << 20}, "x"), kMaxElements);
  auto over = CheckedElements({int64_t{1} << 32, int64_t{1} << 32}, "input \"x\"");
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().message(), "input \"x\": shape [4294967296,4294967296] has more than 1099511627776 elements");
  auto negative = CheckedElements({0, -3}, "input \"x\"");
  ASSERT_FALSE(negative.ok());  // a negative dim is an error even beside a 0
  EXPECT_EQ(negative.status().message(), "input \"x\": dimension 1 is negative (-3)");
}

TEST(ShapeMathTest, ExtentSumsRejectNegativeEntriesAndOverflow) {
  EXPECT_EQ(*CheckedExtentSum({}, "x"), 0);
  EXPECT_EQ(*CheckedExtentSum({3, 0, 4}, "x"), 7);
  EXPECT_FALSE(CheckedExtentSum({kMaxElements, 1}, "x").ok());
  EXPECT_FALSE(CheckedExtentSum({kMax, kMax}, "x").ok());
  EXPECT_EQ(CheckedExtentSum({2, -1, 3}, "split").status().message(), "split: entry 1 is negative (-1)");
}

TEST(ShapeMathTest, BytesAreCheckedWithoutOverflow) {
  EXPECT_EQ(*CheckedBytes({v1::INT64, {1 << 20, 1 << 20}}, UINT64_MAX, "x"), uint64_t{8} << 40);
  EXPECT_FALSE(CheckedBytes({v1::FLOAT32, {4, 5}}, 79, "x").ok());
  EXPECT_EQ(*CheckedBytes({v1::FLOAT32, {4, 5}}, 80, "x"), 80u);
}

TEST(ShapeMathTest, AScalarHasNoAxes) {
  auto a = CheckedAxis(0, 0, "attribute \"axis\"");
  ASSERT_EQ(a.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(a.status().message(),
            "attribute \"axis\" = 0 is out of range: the input is a scalar (rank 0), which has no axes");
  EXPECT_FALSE(CheckedAxis(-1, 0, "axis").ok());
  // ...but an op that may name one past the end (Flatten, Unsqueeze) passes rank + 1.
  EXPECT_EQ(*CheckedAxis(0, 1, "axis"), 0);
}

TEST(ShapeMathTest, AxesCountFromTheEndAndStayInRange) {
  EXPECT_EQ(*CheckedAxis(-1, 3, "axis"), 2);
  EXPECT_EQ(*CheckedAxis(-3, 3, "axis"), 0);
  EXPECT_EQ(*CheckedAxis(2, 3, "axis"), 2);
  EXPECT_EQ(CheckedAxis(3, 3, "axis").status().message(), "axis = 3 is out of range for rank 3 (valid: -3 to 2)");
  EXPECT_FALSE(CheckedAxis(-4, 3, "axis").ok());
  EXPECT_FALSE(CheckedAxis(kMin, 3, "axis").ok());
  EXPECT_FALSE(CheckedAxis(kMax, 3, "axis").ok());
}

TEST(ShapeMathTest, AnAxisNamedTwiceIsAnError) {
  EXPECT_EQ(*CheckedAxes({-1, 0}, 3, "axes"), (std::vector<int64_t>{2, 0}));
  auto twice = CheckedAxes({1, -2}, 3, "attribute \"axes\"");
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.status().message(), "attribute \"axes\" names axis 1 more than once");
}

SliceRange Slice(int64_t start, int64_t end, int64_t step, int64_t dim) {
  auto r = CheckedSlice(start, end, step, dim, "axis 0");
  EXPECT_TRUE(r.ok()) << r.status();
  return r.value_or(SliceRange{-1, -1});
}

void ExpectSlice(SliceRange r, int64_t start, int64_t count) {
  EXPECT_EQ(r.count, count);
  if (count > 0) {
    EXPECT_EQ(r.start, start);
  }
}

TEST(ShapeMathTest, SliceWithExtremeStepsTakesOneElement) {
  // The case: x[0:INT64_MAX:INT64_MAX] is x[0:1] (NumPy and ONNX alike).
  ExpectSlice(Slice(0, kMax, kMax, 5), 0, 1);
  ExpectSlice(Slice(kMax, kMin, kMin, 5), 4, 1);  // backwards from the last element, one step
  ExpectSlice(Slice(-1, kMin, kMin, 5), 4, 1);
  ExpectSlice(Slice(2, kMax, kMax - 1, 5), 2, 1);
}

TEST(ShapeMathTest, SliceClampsStartsAndEnds) {
  ExpectSlice(Slice(kMin, kMax, 1, 5), 0, 5);
  ExpectSlice(Slice(kMax, kMin, -1, 5), 4, 5);  // the whole axis reversed
  ExpectSlice(Slice(-2, 5, 1, 5), 3, 2);
  ExpectSlice(Slice(1, -1, 2, 6), 1, 2);  // 1, 3
  ExpectSlice(Slice(4, 4, 1, 5), 0, 0);
  ExpectSlice(Slice(3, 1, 1, 5), 0, 0);
  ExpectSlice(Slice(1, 3, -1, 5), 0, 0);
  // ONNX clamps a negative step's start into [0, dim - 1]: x[-INF::-1] starts at 0 and takes it (NumPy would take
  // nothing; ONNX's text and onnxruntime take element 0).
  ExpectSlice(Slice(kMin, kMin, -1, 5), 0, 1);
  ExpectSlice(Slice(-7, -6, -1, 5), 0, 1);
}

TEST(ShapeMathTest, SliceOfAnEmptyAxisIsEmptyInBothDirections) {
  ExpectSlice(Slice(0, kMax, 1, 0), 0, 0);
  ExpectSlice(Slice(kMax, kMin, -1, 0), 0, 0);
  ExpectSlice(Slice(-1, kMin, kMin, 0), 0, 0);
}

TEST(ShapeMathTest, SliceStepZeroIsAnError) {
  auto r = CheckedSlice(0, 1, 0, 5, "axis 2");
  ASSERT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "axis 2: step is 0");
}

int64_t Window(WindowGeometry g) {
  auto r = CheckedWindowOutput(g, "height");
  EXPECT_TRUE(r.ok()) << r.status();
  return r.value_or(-1);
}

TEST(ShapeMathTest, WindowOutputsFollowTheFormula) {
  EXPECT_EQ(Window({.input = 5, .kernel = 3}), 3);
  EXPECT_EQ(Window({.input = 5, .kernel = 3, .stride = 2}), 2);
  EXPECT_EQ(Window({.input = 5, .kernel = 3, .stride = 1, .dilation = 2}), 1);
  EXPECT_EQ(Window({.input = 5, .kernel = 3, .stride = 2, .dilation = 1, .pad_begin = 1, .pad_end = 1}), 3);
  EXPECT_EQ(Window({.input = 1, .kernel = 1, .stride = kMax}), 1);
}

TEST(ShapeMathTest, CeilModeDropsALastWindowThatStartsInThePadding) {
  // in 5, k 2, s 2, pads 1+1: ceil((5 + 2 - 2) / 2) + 1 = 4, but the 4th window would start at 3 * 2 = 6 in the
  // padded axis, where only padding is left (6 >= in + pad_begin = 6): torch drops it.
  EXPECT_EQ(Window({.input = 5, .kernel = 2, .stride = 2, .pad_begin = 1, .pad_end = 1, .ceil_mode = true}), 3);
  EXPECT_EQ(Window({.input = 6, .kernel = 3, .stride = 2, .ceil_mode = true}), 3);   // ceil(3 / 2) + 1
  EXPECT_EQ(Window({.input = 6, .kernel = 3, .stride = 2, .ceil_mode = false}), 2);  // floor(3 / 2) + 1
  // A kernel one past the input still fits in ceil mode when the stride covers it (torch: 2x2 input, 3x3 s2 -> 1).
  EXPECT_EQ(Window({.input = 2, .kernel = 3, .stride = 2, .ceil_mode = true}), 1);
}

TEST(ShapeMathTest, AKernelLargerThanThePaddedInputIsRejected) {
  auto r = CheckedWindowOutput({.input = 3, .kernel = 4}, "height");
  ASSERT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(),
            "height: the kernel spans 4 elements (kernel 4, dilation 1), more than the padded input's 3 (input 3, "
            "pads 0 + 0)");
  EXPECT_FALSE(CheckedWindowOutput({.input = 2, .kernel = 3, .stride = 1, .ceil_mode = true}, "h").ok());
  EXPECT_FALSE(CheckedWindowOutput({.input = 5, .kernel = 2, .stride = 1, .dilation = kMax}, "h").ok());
}

TEST(ShapeMathTest, BadWindowParametersAreRejected) {
  EXPECT_EQ(CheckedWindowOutput({.input = 3, .kernel = 0}, "width").status().message(),
            "width: kernel size 0 must be >= 1");
  EXPECT_FALSE(CheckedWindowOutput({.input = 3, .kernel = 1, .stride = 0}, "w").ok());
  EXPECT_FALSE(CheckedWindowOutput({.input = 3, .kernel = 1, .stride = 1, .dilation = 0}, "w").ok());
  EXPECT_FALSE(CheckedWindowOutput({.input = 3, .kernel = 1, .stride = 1, .dilation = 1, .pad_begin = -1}, "w").ok());
}

TEST(ShapeMathTest, HugePadsAreRejectedInsteadOfWrapping) {
  // The wedge: pads near 2^61 gave an absurd output extent.
  const int64_t p = int64_t{1} << 61;
  auto r = CheckedWindowOutput({.input = 4, .kernel = 3, .stride = 1, .dilation = 1, .pad_begin = p, .pad_end = p},
                               "height");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "height: the padded input extent (input 4, pads 2305843009213693952 + 2305843009213693952) exceeds "
            "1099511627776");
  // A huge stride does not make huge pads acceptable: the run would compute window offsets past int64.
  EXPECT_FALSE(CheckedWindowOutput({.input = 4, .kernel = 1, .stride = p, .dilation = 1, .pad_begin = p,
                                    .pad_end = p},
                                   "h")
                   .ok());
  EXPECT_FALSE(CheckedWindowOutput({.input = kMax, .kernel = 1, .stride = 1, .dilation = 1, .pad_begin = kMax,
                                    .pad_end = kMax},
                                   "h")
                   .ok());
  EXPECT_FALSE(
      CheckedWindowOutput({.input = 4, .kernel = kMax, .stride = kMax, .dilation = kMax, .ceil_mode = true}, "h").ok());
}

}  // namespace
}  // namespace npu::graph
