// The float-status flag (TileWork::overflow_elements summed over a run,
// ExecResult::overflow_elements and the profile): on a preset that saturates
// fp16 (ascend910) an overflow leaves no inf behind, yet the flag is raised;
// on the inf/NaN preset (ascend910b) the same flag counts the infs. The
// Vector stores and the Cube's FixPipe both count.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/graph_builder.h"
#include "gtest/gtest.h"
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

// Runs a one-node graph y = op(inputs...) and returns the result.
ExecResult RunOne(const std::string& preset, const std::string& op, std::vector<HostTensor> inputs,
                  const client::Attributes& attrs = {}) {
  client::GraphBuilder g("float_status");
  std::vector<client::Value> in;
  for (size_t i = 0; i < inputs.size(); ++i) {
    in.push_back(g.Input(absl::StrCat("x", i), inputs[i].type().dtype, inputs[i].type().shape));
  }
  g.Output(g.Op(op, in, attrs), "y");
  auto plan = BuildPlan(std::make_shared<const v1::Graph>(g.Build()), DeviceFor(preset).preset());
  EXPECT_TRUE(plan.ok()) << plan.status();
  ExecOptions options;
  options.profile = true;
  auto result = RunPlan(*plan, std::move(inputs), options, DeviceFor(preset));
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

}  // namespace
}  // namespace npu::graph
