// The float-status flag (TileWork::overflow_elements summed over a run,
// ExecResult::overflow_elements and the profile): on a preset that saturates
// fp16 (ascend910) an overflow leaves no inf behind, yet the flag is raised;
// on the inf/NaN preset (ascend910b) the same flag counts the infs. The
// Vector stores and the Cube's FixPipe both count.
//
// And both float modes at every fp16 conversion: the Vector ops' stores, Cast,
// and the Cube's own rounding of fp32 operands to fp16 (MTE1: MatMul's A and B
// packers, constant B packed at plan time, Conv's img2col, ConvTranspose's
// gather), on each Cube SIMD path. Expected values are worked by hand: on the
// 910 1e5 is the operand 65504 (so [1e5, 3] . [1, -1] = 65501, exact in
// fp32), on the 910B it is inf.
#include <cmath>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/graph_builder.h"
#include "gtest/gtest.h"
#include "kernels/cpu_features.h"
#include "kernels/cube_gemm.h"
#include "kernels/fp16.h"
#include "server/device/device.h"
#include "server/graph/runner.h"

namespace npu::graph {
namespace {

using kernels::half_bits;

device::Device& DeviceFor(const std::string& preset) {
  static auto* devices = new std::map<std::string, std::unique_ptr<device::Device>>();
  auto& d = (*devices)[preset];
  if (!d) d = std::make_unique<device::Device>(0, device::PresetByName(preset).value(), device::DeviceOptions{});
  return *d;
}

HostTensor Half(std::vector<float> values) {
  HostTensor t = HostTensor::Allocate({v1::FLOAT16, {static_cast<int64_t>(values.size())}});
  for (size_t i = 0; i < values.size(); ++i) t.mutable_as<half_bits>()[i] = kernels::FloatToHalf(values[i]);
  return t;
}

HostTensor Float(std::vector<float> values, Shape shape = {}) {
  if (shape.empty()) shape = {static_cast<int64_t>(values.size())};
  HostTensor t = HostTensor::Allocate({v1::FLOAT32, shape});
  std::copy(values.begin(), values.end(), t.mutable_as<float>());
  return t;
}

// Runs a one-node graph y = op(inputs...) and returns the result. Inputs at
// the indices in `constant` are initializers (a MatMul's weights packed at
// plan time) instead of graph inputs.
ExecResult RunOne(const std::string& preset, const std::string& op, std::vector<HostTensor> inputs,
                  const client::Attributes& attrs = {}, std::set<size_t> constant = {}) {
  client::GraphBuilder g("float_status");
  std::vector<client::Value> in;
  std::vector<HostTensor> fed;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string name = absl::StrCat("x", i);
    if (constant.contains(i)) {
      v1::Tensor t;
      t.set_dtype(inputs[i].type().dtype);
      for (int64_t d : inputs[i].type().shape) t.add_shape(d);
      t.set_data(inputs[i].data(), inputs[i].bytes());
      in.push_back(g.Constant(name, std::move(t)));
      continue;
    }
    in.push_back(g.Input(name, inputs[i].type().dtype, inputs[i].type().shape));
    fed.push_back(inputs[i]);
  }
  g.Output(g.Op(op, in, attrs), "y");
  auto plan = BuildPlan(std::make_shared<const v1::Graph>(g.Build()), DeviceFor(preset).preset());
  EXPECT_TRUE(plan.ok()) << plan.status();
  ExecOptions options;
  options.profile = true;
  auto result = RunPlan(*plan, std::move(fed), options, DeviceFor(preset));
  EXPECT_TRUE(result.ok()) << result.status();
  return *std::move(result);
}

bool AnyInfOrNan(const HostTensor& t) {
  for (int64_t i = 0; i < t.type().elements(); ++i) {
    const float v = t.type().dtype == v1::FLOAT16 ? kernels::HalfToFloat(t.as<half_bits>()[i]) : t.as<float>()[i];
    if (!std::isfinite(v)) return true;
  }
  return false;
}

TEST(FloatStatusTest, SaturationThatAnIsinfCheckMissesRaisesTheFlag) {
  // 60000 * 2 saturates to 65504 on the 910: no inf anywhere for a check to find.
  ExecResult r = RunOne("ascend910", "Mul", {Half({60000, 1, -60000}), Half({2, 2, 2})});
  EXPECT_FALSE(AnyInfOrNan(r.outputs[0]));
  EXPECT_EQ(kernels::HalfToFloat(r.outputs[0].as<half_bits>()[0]), 65504.0f);
  EXPECT_EQ(r.overflow_elements, 2u);
  EXPECT_EQ(r.profile.overflow_elements(), 2u);
  ASSERT_EQ(r.profile.nodes_size(), 1);
  EXPECT_EQ(r.profile.nodes(0).overflow_elements(), 2u);
}

TEST(FloatStatusTest, TheInfNanPresetCountsTheInfs) {
  ExecResult r = RunOne("ascend910b", "Mul", {Half({60000, 1, -60000}), Half({2, 2, 2})});
  EXPECT_TRUE(AnyInfOrNan(r.outputs[0]));
  EXPECT_EQ(r.overflow_elements, 2u);
}

TEST(FloatStatusTest, TheLargestHalfIsNotAnOverflow) {
  // 65504 is representable; 65519 still rounds to it; 65520 does not.
  EXPECT_EQ(RunOne("ascend910", "Add", {Half({65504, -65504}), Half({0, 0})}).overflow_elements, 0u);
  EXPECT_EQ(RunOne("ascend910", "Cast", {Float({65519.0f, -65519.0f, 1.0f})}, {{"to", client::AttrInt(10)}})
                .overflow_elements,
            0u);
  EXPECT_EQ(RunOne("ascend910", "Cast", {Float({65520.0f, 1e30f, 1.0f})}, {{"to", client::AttrInt(10)}})
                .overflow_elements,
            2u);
}

TEST(FloatStatusTest, Fp32InfinitiesAndNansCount) {
  ExecResult r = RunOne("ascend910", "Exp", {Float({100.0f, 1.0f, 0.0f})});
  EXPECT_EQ(r.overflow_elements, 1u);  // exp(100) overflows fp32
  EXPECT_EQ(RunOne("ascend910", "Div", {Float({0.0f, 1.0f}), Float({0.0f, 0.0f})}).overflow_elements, 2u);
}

TEST(FloatStatusTest, TheCubesFixPipeCounts) {
  // Rows of 64 products 16 * 128 = 2048 sum to 131072: beyond fp16 on the way out.
  HostTensor a = HostTensor::Allocate({v1::FLOAT16, {2, 64}}), b = HostTensor::Allocate({v1::FLOAT16, {64, 3}});
  std::fill_n(a.mutable_as<half_bits>(), 128, kernels::FloatToHalf(16.0f));
  std::fill_n(b.mutable_as<half_bits>(), 192, kernels::FloatToHalf(128.0f));
  ExecResult r = RunOne("ascend910", "MatMul", {a, b});
  EXPECT_FALSE(AnyInfOrNan(r.outputs[0]));
  EXPECT_EQ(r.overflow_elements, 6u);
  // Small values: nothing.
  std::fill_n(b.mutable_as<half_bits>(), 192, kernels::FloatToHalf(1.0f));
  EXPECT_EQ(RunOne("ascend910", "MatMul", {a, b}).overflow_elements, 0u);
}

TEST(FloatStatusTest, EachRunStartsClear) {
  EXPECT_EQ(RunOne("ascend910", "Mul", {Half({60000}), Half({2})}).overflow_elements, 1u);
  EXPECT_EQ(RunOne("ascend910", "Mul", {Half({1}), Half({2})}).overflow_elements, 0u);
}

// --- Both float modes at every fp16 conversion ---

constexpr float kInf = std::numeric_limits<float>::infinity();
const char* const kSaturation = "ascend910";
const char* const kInfNan = "ascend910b";

float Out(const ExecResult& r, int64_t i = 0) {
  const HostTensor& t = r.outputs[0];
  return t.type().dtype == v1::FLOAT16 ? kernels::HalfToFloat(t.as<half_bits>()[i]) : t.as<float>()[i];
}

TEST(FloatModeTest, VectorOpsStoreInTheMode) {
  // exp(12) = 162754.8: past fp16's range.
  EXPECT_EQ(Out(RunOne(kSaturation, "Exp", {Half({12})})), 65504.0f);
  EXPECT_EQ(Out(RunOne(kInfNan, "Exp", {Half({12})})), kInf);
  const float sat = Out(RunOne(kSaturation, "Sqrt", {Half({-1})}));
  EXPECT_EQ(sat, 0.0f);
  EXPECT_TRUE(std::isnan(Out(RunOne(kInfNan, "Sqrt", {Half({-1})}))));
}

TEST(FloatModeTest, CastToFp16RoundsInTheMode) {
  const client::Attributes to16{{"to", client::AttrInt(10)}};
  const HostTensor x = Float({1e5f, -1e5f, std::nanf(""), 3.0f});
  const ExecResult sat = RunOne(kSaturation, "Cast", {x}, to16), ieee = RunOne(kInfNan, "Cast", {x}, to16);
  EXPECT_EQ(Out(sat, 0), 65504.0f);
  EXPECT_EQ(Out(sat, 1), -65504.0f);
  EXPECT_EQ(Out(sat, 2), 0.0f);
  EXPECT_EQ(Out(ieee, 0), kInf);
  EXPECT_EQ(Out(ieee, 1), -kInf);
  EXPECT_TRUE(std::isnan(Out(ieee, 2)));
  EXPECT_EQ(Out(sat, 3), 3.0f);
  EXPECT_EQ(Out(ieee, 3), 3.0f);
}

// Every Cube op whose fp32 operands round to fp16, on each SIMD path of the
// packers, with the big value in A and (swapped) in B, given at run time and as
// a constant packed at plan time.
class CubeFloatModeTest : public ::testing::TestWithParam<kernels::SimdPath> {
 protected:
  void SetUp() override {
    if (!kernels::CpuCanRun(GetParam())) GTEST_SKIP() << "this CPU cannot run the path";
    kernels::ForceCubeSimdPath(GetParam());
  }
  void TearDown() override { kernels::ForceCubeSimdPath(kernels::SimdPath::kAuto); }

  // y on the 910 (saturation) and on the 910B (inf_nan), each must be as given.
  static void Expect(const std::string& op, std::vector<HostTensor> in, float saturation, float inf_nan,
                     const client::Attributes& attrs = {}, std::set<size_t> constant = {}) {
    const ExecResult sat = RunOne(kSaturation, op, in, attrs, constant);
    const ExecResult ieee = RunOne(kInfNan, op, in, attrs, constant);
    EXPECT_EQ(Out(sat), saturation) << op << " on the 910";
    // Each case holds one operand that saturation hides (1e5, NaN, -inf): the
    // float status still counts it once, or an overflow check would miss it.
    EXPECT_EQ(sat.overflow_elements, 1u) << op << " on the 910";
    if (std::isnan(inf_nan)) {
      EXPECT_TRUE(std::isnan(Out(ieee))) << op << " on the 910B: " << Out(ieee);
    } else {
      EXPECT_EQ(Out(ieee), inf_nan) << op << " on the 910B";
    }
  }
};

TEST_P(CubeFloatModeTest, MatMulOperandsRoundInTheMode) {
  const HostTensor x = Float({1e5f, 3.0f}, {1, 2}), w = Float({1.0f, -1.0f}, {2, 1});
  Expect("MatMul", {x, w}, 65501.0f, kInf);
  Expect("MatMul", {x, w}, 65501.0f, kInf, {}, {1});  // constant weights
  // The big value in B: [1, -1] x [1e5; 3].
  Expect("MatMul", {Float({1.0f, -1.0f}, {1, 2}), Float({1e5f, 3.0f}, {2, 1})}, 65501.0f, kInf);
  Expect("MatMul", {Float({1.0f, -1.0f}, {1, 2}), Float({1e5f, 3.0f}, {2, 1})}, 65501.0f, kInf, {}, {1});
  // A NaN operand is 0 on the 910: 0 * 1 + 3 * -1.
  Expect("MatMul", {Float({std::nanf(""), 3.0f}, {1, 2}), w}, -3.0f, std::nanf(""));
  // -inf saturates to -65504: -65504 - 3.
  Expect("MatMul", {Float({-kInf, 3.0f}, {1, 2}), w}, -65507.0f, -kInf);
}

TEST_P(CubeFloatModeTest, GemmOperandsRoundInTheMode) {
  const client::Attributes trans_b{{"transB", client::AttrInt(1)}};
  const HostTensor x = Float({1e5f, 3.0f}, {1, 2}), w = Float({1.0f, -1.0f}, {1, 2});
  Expect("Gemm", {x, w}, 65501.0f, kInf, trans_b);
  Expect("Gemm", {x, w}, 65501.0f, kInf, trans_b, {1});
  Expect("Gemm", {w, Float({1e5f, 3.0f}, {1, 2})}, 65501.0f, kInf, trans_b);
  Expect("Gemm", {w, Float({1e5f, 3.0f}, {1, 2})}, 65501.0f, kInf, trans_b, {1});  // big constant weights
}

TEST_P(CubeFloatModeTest, ConvImg2ColRoundsInTheMode) {
  // Two channels [1e5, 3] of one pixel against weights [1, -1]; 1x1 (the flat
  // img2col) and 3x3 padded (the windowed one: the centre tap sees the pixel).
  const HostTensor x = Float({1e5f, 3.0f}, {1, 2, 1, 1});
  Expect("Conv", {x, Float({1.0f, -1.0f}, {1, 2, 1, 1})}, 65501.0f, kInf, {}, {1});
  Expect("Conv", {x, Float({1.0f, -1.0f}, {1, 2, 1, 1})}, 65501.0f, kInf);
  std::vector<float> w3(18, 0.0f);
  w3[4] = 1.0f, w3[13] = -1.0f;
  Expect("Conv", {x, Float(w3, {1, 2, 3, 3})}, 65501.0f, kInf, {{"pads", client::AttrInts({1, 1, 1, 1})}}, {1});
  // A row of 20 pixels with a stride of 2 (the AVX-512 packer's strided load).
  std::vector<float> row(40, 0.0f);
  row[0] = 1e5f, row[20] = 3.0f;
  Expect("Conv", {Float(row, {1, 2, 1, 20}), Float({1.0f, -1.0f}, {1, 2, 1, 1})}, 65501.0f, kInf,
         {{"strides", client::AttrInts({1, 2})}}, {1});
}

TEST_P(CubeFloatModeTest, ConvTransposeGatherRoundsInTheMode) {
  const HostTensor x = Float({1e5f, 3.0f}, {1, 2, 1, 1});
  Expect("ConvTranspose", {x, Float({1.0f, -1.0f}, {2, 1, 1, 1})}, 65501.0f, kInf, {}, {1});
  Expect("ConvTranspose", {x, Float({1.0f, -1.0f}, {2, 1, 1, 1})}, 65501.0f, kInf);
}

INSTANTIATE_TEST_SUITE_P(CubePaths, CubeFloatModeTest,
                         ::testing::Values(kernels::SimdPath::kAvx512, kernels::SimdPath::kAvx2,
                                           kernels::SimdPath::kPortable),
                         [](const auto& info) { return std::string(kernels::SimdPathName(info.param)); });

}  // namespace
}  // namespace npu::graph
