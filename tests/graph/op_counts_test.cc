// The work the ops count, run for real on small tensors (zeros) through
// BuildPlan + ExecutePlan, against closed forms computed here: Conv's traffic
// as the NC1HWC0 layout moves it, tilings that fill the chip, the Cube's drain
// per core kind.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "server/device/device.h"
#include "server/graph/cube_tiling.h"
#include "server/graph/executor.h"
#include "server/graph/plan.h"
#include "server/graph/vector_tiling.h"
#include "server/device/vector_passes.h"

namespace npu::graph {
namespace {

struct Input {
  std::string name;
  v1::DataType dtype;
  std::vector<int64_t> shape;
  std::vector<int64_t> constant = {};  // INT64 values: an initializer instead of a fed input
};

// Profile of a one-node graph with every input fed zeros.
v1::NodeProfile RunOne(const char* preset, const std::string& op, const std::vector<Input>& inputs,
                       const std::vector<std::pair<std::string, v1::AttributeValue>>& attrs = {}) {
  auto g = std::make_shared<v1::Graph>();
  v1::Node* n = g->add_nodes();
  n->set_name("n");
  n->set_op_type(op);
  for (const Input& in : inputs) {
    n->add_inputs(in.name);
    if (!in.constant.empty()) {
      v1::Initializer* c = g->add_initializers();
      c->set_name(in.name);
      c->mutable_tensor()->set_dtype(v1::INT64);
      for (int64_t d : in.shape) c->mutable_tensor()->add_shape(d);
      c->mutable_tensor()->set_data(std::string(reinterpret_cast<const char*>(in.constant.data()),
                                                in.constant.size() * sizeof(int64_t)));
      continue;
    }
    v1::ValueInfo* v = g->add_inputs();
    v->set_name(in.name);
    v->set_dtype(in.dtype);
    for (int64_t d : in.shape) v->add_shape(d);
  }
  for (const auto& [k, v] : attrs) (*n->mutable_attributes())[k] = v;
  n->add_outputs("y");
  g->add_outputs("y");
  device::Device dev(0, *device::PresetByName(preset), device::DeviceOptions{1, 4});
  auto plan = BuildPlan(g, dev.preset());
  EXPECT_TRUE(plan.ok()) << plan.status();
  std::vector<HostTensor> feeds;
  for (const Input& in : inputs) {
    if (in.constant.empty()) feeds.push_back(HostTensor::Allocate({in.dtype, in.shape}));
  }
  absl::StatusOr<ExecResult> result = absl::UnknownError("not run");
  ExecOptions options;
  options.profile = true;
  options.device_id = "npu:0";
  EXPECT_TRUE(dev.Execute([&](device::DeviceSession& s) {
                   result = ExecutePlan(**plan, feeds, options, s);
                 }).ok());
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() && result->profile.nodes_size() == 1 ? result->profile.nodes(0) : v1::NodeProfile{};
}

v1::AttributeValue Ints(std::vector<int64_t> v) {
  v1::AttributeValue a;
  for (int64_t x : v) a.mutable_ints()->add_values(x);
  return a;
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

TEST(OpCountsTest, ConvPadsChannelsPerTapAndReadsItsInputOnce) {
  // 3 input channels, 7x7 kernel, stride 1, pad 3 on 32x32: each of the 49 taps
  // pads C to 16, so a 16x16 output fractal takes 49 K fractals (not
  // ceil(3 * 49 / 16) = 10), and MTE2 reads each tile's weights and the input
  // rows its pixels need, C padded to 16: never the 49x expanded columns.
  const device::DevicePreset preset = *device::PresetByName("ascend910");
  const v1::NodeProfile p =
      RunOne("ascend910", "Conv", {{"x", v1::FLOAT16, {1, 3, 32, 32}}, {"w", v1::FLOAT16, {16, 3, 7, 7}}},
             {{"pads", Ints({3, 3, 3, 3})}});
  EXPECT_EQ(p.busy().cube(), uint64_t{1} * (1024 / 16) * 49);
  const CubePlan plan = PlanCubeTiles(1, 16, 1024, 49 * 16, preset);
  uint64_t mte2 = 0;
  for (int64_t n0 = 0; n0 < 1024; n0 += plan.tile.n) {
    const int64_t nt = std::min<int64_t>(plan.tile.n, 1024 - n0);
    const int64_t oy0 = n0 / 32, oy1 = (n0 + nt - 1) / 32;
    const int64_t rows = std::min<int64_t>(31, oy1 + 3) - std::max<int64_t>(0, oy0 - 3) + 1;
    mte2 += static_cast<uint64_t>(rows * 32 * 16 * 2) + 16 * 16 * 49 * 2;  // input rows + FRACTAL_Z weights
  }
  EXPECT_EQ(p.bytes().mte2(), mte2);
  EXPECT_EQ(p.block_dim(), std::min<int>(preset.cube_cores, static_cast<int>(CeilDiv(1024, plan.tile.n))));
}

TEST(OpCountsTest, PointwiseConvAndSkinnyMatmulFillTheChip) {
  // 1x1 Conv of 64 -> 64 channels on 56x56, and a 16 x 4096 x 4096 MatMul:
  // a fixed 256x256 tile would use 13 and 16 of the 910's 32 cores. The Conv
  // takes 64 x 112 tiles, 28 of them (3136 = 28 x 112) in one wave; the
  // MatMul 16 x 128 tiles, 32 of them.
  const v1::NodeProfile conv =
      RunOne("ascend910", "Conv", {{"x", v1::FLOAT16, {1, 64, 56, 56}}, {"w", v1::FLOAT16, {64, 64, 1, 1}}});
  EXPECT_EQ(conv.block_dim(), 28);
  const v1::NodeProfile mm =
      RunOne("ascend910", "MatMul", {{"a", v1::FLOAT16, {16, 4096}}, {"b", v1::FLOAT16, {4096, 4096}}});
  EXPECT_EQ(mm.block_dim(), 32);
}

TEST(OpCountsTest, CopiesOfOneLongRowAreSplitOverAllCores) {
  // Expand of a 1-D tensor is one row of 65,536 elements: split over the
  // elements, it runs on all 32 cores (by rows it would take one).
  const v1::NodeProfile p =
      RunOne("ascend910", "Expand", {{"x", v1::FLOAT16, {1}}, {"s", v1::INT64, {1}, {65536}}});
  EXPECT_EQ(p.block_dim(), 32);
  EXPECT_EQ(p.bytes().mte3(), 65536u * 2);
}

TEST(OpCountsTest, CoupledCoresDrainTheCubeThroughUbAndSeparatedOnesThroughFixPipe) {
  const std::vector<Input> mm = {{"a", v1::FLOAT16, {256, 256}}, {"b", v1::FLOAT16, {256, 256}}};
  const v1::NodeProfile coupled = RunOne("ascend910", "MatMul", mm);
  EXPECT_EQ(coupled.bytes().fixpipe(), 0u);
  EXPECT_EQ(coupled.bytes().mte3(), 256u * 256 * 2);  // UB -> GM, fp16
  EXPECT_GT(coupled.busy().vector(), 0u);             // L0C -> UB by the Vector unit
  const v1::NodeProfile separated = RunOne("ascend910b", "MatMul", mm);
  EXPECT_EQ(separated.bytes().fixpipe(), 256u * 256 * 2);
  EXPECT_EQ(separated.bytes().mte3(), 0u);
  EXPECT_EQ(separated.busy().vector(), 0u);
}

TEST(OpCountsTest, VectorWorkIsCountedInTheLanesOfItsType) {
  // 65,536-element Add: one pass of 256 B repeats, 128 fp16 or 64 fp32 lanes
  // each, plus 2 cycles of issue per instruction of up to 255 repeats.
  const device::DevicePreset preset = *device::PresetByName("ascend910");
  for (auto [dtype, lane] : {std::pair{v1::FLOAT16, int64_t{2}}, std::pair{v1::FLOAT32, int64_t{4}}}) {
    const v1::NodeProfile p = RunOne("ascend910", "Add", {{"a", dtype, {65536}}, {"b", dtype, {65536}}});
    const VectorTiling t = PlanVectorTiles(65536, lane * 3, preset);
    uint64_t cycles = 0;
    for (int64_t tile = 0; tile < t.tiles; ++tile) {
      const int64_t end = std::min<int64_t>(65536, t.TileBegin(tile) + t.per_tile);
      for (int64_t s = t.TileBegin(tile); s < end; s += t.chunk) {
        const int64_t repeats = CeilDiv(std::min(t.chunk, end - s) * lane, 256);
        cycles += static_cast<uint64_t>(repeats + 2 * CeilDiv(repeats, 255));
      }
    }
    EXPECT_EQ(p.busy().vector(), cycles) << v1::DataType_Name(dtype);
  }
}

TEST(OpCountsTest, OpsChargeThePassesOfTheirKernel) {
  // Same shape, same chunks: Vector cycles in the ratio of the table's passes.
  const std::vector<Input> x = {{"x", v1::FLOAT16, {1 << 16}}};
  const uint64_t relu = RunOne("ascend910", "Relu", x).busy().vector();
  for (auto [op, kernel] : {std::pair{"Tanh", device::VectorKernel::kTanh}, std::pair{"Gelu", device::VectorKernel::kGeluErf},
                            std::pair{"Sigmoid", device::VectorKernel::kSigmoid}, std::pair{"Erf", device::VectorKernel::kErf}}) {
    EXPECT_EQ(RunOne("ascend910", op, x).busy().vector(), relu * device::VectorPasses(kernel)) << op;
  }
  const std::vector<Input> ab = {{"a", v1::FLOAT16, {1 << 16}}, {"b", v1::FLOAT16, {1 << 16}}};
  EXPECT_EQ(RunOne("ascend910", "Div", ab).busy().vector(),
            RunOne("ascend910", "Add", ab).busy().vector() * device::VectorPasses(device::VectorKernel::kDiv));
}

}  // namespace
}  // namespace npu::graph
