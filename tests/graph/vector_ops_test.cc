// The Vector ops as the server runs them (OpRegistry -> OpDef::run): the
// overflow count every op adds to its tiles (what raises the NPU float-status
// flag), in both fp16 overflow modes, and results that do not depend on the
// SIMD path or the host thread count.
#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/parallel_grain.h"
#include "kernels/fp16.h"
#include "kernels/openmp.h"
#include "kernels/vector_kernels.h"
#include "server/device/device_preset.h"
#include "server/graph/op_registry.h"

namespace npu::graph {
namespace {

using kernels::half_bits;
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

HostTensor Tensor(DataType dt, Shape shape, const std::vector<float>& values) {
  HostTensor t = HostTensor::Allocate({dt, std::move(shape)});
  for (size_t i = 0; i < values.size(); ++i) {
    if (dt == v1::FLOAT16) {
      t.mutable_as<half_bits>()[i] = kernels::FloatToHalf(values[i]);
    } else {
      t.mutable_as<float>()[i] = values[i];
    }
  }
  return t;
}

std::vector<float> Values(const HostTensor& t) {
  std::vector<float> v(static_cast<size_t>(t.type().elements()));
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = t.type().dtype == v1::FLOAT16 ? kernels::HalfToFloat(t.as<half_bits>()[i]) : t.as<float>()[i];
  }
  return v;
}

struct Ran {
  std::vector<HostTensor> outputs;
  uint64_t overflow = 0;
};

// Runs op `type` on `inputs` with the outputs of `out_types` on `preset`.
Ran RunOp(const std::string& type, const std::vector<const HostTensor*>& inputs,
          const std::vector<TensorType>& out_types, const char* preset_name, void (*attrs)(v1::Node&) = nullptr) {
  v1::Node node;
  node.set_op_type(type);
  node.set_name("n");
  if (attrs != nullptr) attrs(node);
  const device::DevicePreset preset = device::PresetByName(preset_name).value();
  const OpDef* op = OpRegistry::Global().Find(type);
  InferContext infer{node, {}, {}};  // planned as the server does: infer (prepare), then run
  for (const HostTensor* in : inputs) infer.inputs.push_back(&in->type()), infer.constants.push_back(nullptr);
  infer.preset = &preset;
  auto types = op->infer(infer);
  EXPECT_TRUE(types.ok()) << types.status();
  if (types.ok()) EXPECT_EQ(types->at(0), out_types[0]) << type;
  std::vector<HostTensor> outs;
  for (const TensorType& t : out_types) outs.push_back(HostTensor::Allocate(t));
  RunContext ctx{node, NodeAttributes(node), inputs, outs, preset, {}};
  ctx.state = infer.state.get();
  const absl::Status s = op->run(ctx);
  EXPECT_TRUE(s.ok()) << s;
  Ran r{ctx.outputs, 0};
  for (const device::TileWork& w : ctx.work.tiles) r.overflow += w.overflow_elements;
  return r;
}

TEST(VectorOpsOverflow, Fp16ResultsSaturateOnThe910AndCountEitherWay) {
  // exp: 11 fits (59874), 12 and 20 overflow, NaN stays a NaN result.
  const HostTensor x = Tensor(v1::FLOAT16, {6}, {10, 11, 12, 20, kNan, -kInf});
  const Ran ieee = RunOp("Exp", {&x}, {x.type()}, "ascend910b");
  const Ran sat = RunOp("Exp", {&x}, {x.type()}, "ascend910");
  EXPECT_EQ(ieee.overflow, 3u);
  EXPECT_EQ(sat.overflow, 3u);
  const std::vector<float> a = Values(ieee.outputs[0]), b = Values(sat.outputs[0]);
  EXPECT_TRUE(std::isinf(a[2]) && std::isinf(a[3]) && std::isnan(a[4]));
  EXPECT_EQ(b[2], 65504.0f);
  EXPECT_EQ(b[3], 65504.0f);
  EXPECT_EQ(b[4], 0.0f);
  EXPECT_EQ(a[5], 0.0f);
}

TEST(VectorOpsOverflow, EveryVectorOpFamilyCounts) {
  const HostTensor big = Tensor(v1::FLOAT16, {2, 4}, {60000, -60000, 1, 2, 3, 4, 5, 6});
  const HostTensor two = Tensor(v1::FLOAT16, {2, 4}, {2, 2, 2, 2, 2, 2, 2, 2});
  EXPECT_EQ(RunOp("Mul", {&big, &two}, {big.type()}, "ascend910").overflow, 2u);
  EXPECT_EQ(RunOp("Add", {&big, &big}, {big.type()}, "ascend910b").overflow, 2u);
  // fp32: an inf or NaN result counts too.
  const HostTensor f = Tensor(v1::FLOAT32, {4}, {1e38f, -1e38f, 1, kNan});
  const HostTensor ten = Tensor(v1::FLOAT32, {1}, {10});
  EXPECT_EQ(RunOp("Mul", {&f, &ten}, {f.type()}, "ascend910b").overflow, 3u);
  // A row holding a NaN makes the whole softmax row NaN.
  const HostTensor s = Tensor(v1::FLOAT16, {2, 3}, {1, kNan, 2, 1, 2, 3});
  EXPECT_EQ(RunOp("Softmax", {&s}, {s.type()}, "ascend910b").overflow, 3u);
  // ReduceSum of fp16 beyond 65504; GlobalAveragePool stays in range.
  const HostTensor r = Tensor(v1::FLOAT16, {1, 2, 2, 2}, {40000, 40000, 1, 1, 1, 2, 3, 4});
  EXPECT_EQ(RunOp("ReduceSum", {&r}, {{v1::FLOAT16, {1, 1, 1, 1}}}, "ascend910").overflow, 1u);
  EXPECT_EQ(RunOp("GlobalAveragePool", {&r}, {{v1::FLOAT16, {1, 2, 1, 1}}}, "ascend910").overflow, 0u);
  // LayerNorm whose scale pushes results past fp16.
  const HostTensor ln = Tensor(v1::FLOAT16, {1, 4}, {0, 1, 2, 3});
  const HostTensor gamma = Tensor(v1::FLOAT16, {4}, {60000, 60000, 1, 1});
  EXPECT_EQ(
      RunOp("LayerNormalization", {&ln, &gamma}, {ln.type(), {v1::FLOAT32, {1, 1}}, {v1::FLOAT32, {1, 1}}}, "ascend910")
          .overflow,
      1u);  // (0 - 1.5) / 1.118 * 60000 = -80498
  // Cast fp32 -> fp16.
  const HostTensor c = Tensor(v1::FLOAT32, {3}, {1e5f, 3, -kInf});
  EXPECT_EQ(RunOp("Cast", {&c}, {{v1::FLOAT16, {3}}}, "ascend910",
                  [](v1::Node& n) { (*n.mutable_attributes())["to"].set_i(10); })
                .overflow,
            2u);
}

// One tensor through each op on every SIMD path and 1 or 2 threads: the same bits.
TEST(VectorOpsDeterminism, SameBitsOnEveryPathAndThreadCount) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> d(-4, 4);
  std::vector<float> v(3 * 1031);
  for (float& x : v) x = d(rng);
  struct Case {
    const char* op;
    DataType dt;
  };
  const int saved_threads = omp_get_max_threads();
  const Case cases[] = {{"Softmax", v1::FLOAT32},   {"Softmax", v1::FLOAT16}, {"LayerNormalization", v1::FLOAT32},
                        {"LayerNormalization", v1::FLOAT16}, {"Gelu", v1::FLOAT16}, {"Exp", v1::FLOAT16},
                        {"Sigmoid", v1::FLOAT16}, {"ReduceSum", v1::FLOAT32}, {"Tanh", v1::FLOAT32}};
  for (const Case& cs : cases) {
    const HostTensor x = Tensor(cs.dt, {3, 1031}, v);
    const HostTensor gamma = Tensor(cs.dt, {1031}, std::vector<float>(1031, 1.5f));
    std::vector<const HostTensor*> inputs = {&x};
    std::vector<TensorType> outs = {x.type()};
    if (std::string(cs.op) == "LayerNormalization") {
      inputs.push_back(&gamma);
      outs = {x.type(), {v1::FLOAT32, {3, 1}}, {v1::FLOAT32, {3, 1}}};
    }
    if (std::string(cs.op) == "ReduceSum") outs = {{cs.dt, {1, 1}}};
    std::vector<uint16_t> first;
    for (kernels::SimdPath p : {kernels::SimdPath::kAvx512, kernels::SimdPath::kAvx2, kernels::SimdPath::kPortable}) {
      if (!kernels::CpuCanRun(p)) continue;
      kernels::ForceVectorSimdPath(p);
      for (int threads : {1, 2}) {
        omp_set_num_threads(threads);
        kernels::ScopedSmallWorkInParallel parallel;  // the small shapes on both threads too
        const Ran ran = RunOp(cs.op, inputs, outs, "ascend910b");
        const HostTensor& y = ran.outputs[0];
        const auto* bytes = reinterpret_cast<const uint16_t*>(y.data());
        std::vector<uint16_t> got(bytes, bytes + y.bytes() / 2);
        if (first.empty()) first = got;
        EXPECT_EQ(got, first) << cs.op << " " << kernels::SimdPathName(p) << " threads=" << threads;
      }
    }
    kernels::ForceVectorSimdPath(kernels::SimdPath::kAuto);
    omp_set_num_threads(saved_threads);
  }
}

}  // namespace
}  // namespace npu::graph
