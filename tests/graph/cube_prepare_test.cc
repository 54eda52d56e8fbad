// The Cube ops' plan-time preparation: constant weights packed once into the
// Cube's layout give the same bits as the same weights fed as inputs (packed
// per run), whatever the host thread count; batched MatMul and whole-batch
// Conv give the bits of one GEMM per batch and image, as float64 checks the
// values; the tiling is checked when the graph is planned; Gemm and Conv stop
// between tiles once their run is cancelled, as MatMul does.
#include <atomic>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kernels/parallel_grain.h"
#include "client/graph_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/fp16.h"
#include "server/device/device.h"
#include "server/graph/plan.h"
#include "server/graph/runner.h"
#include "tests/graph/random_tensor.h"

namespace npu::graph {
namespace {

using testing::RandomTensor;
using testing::ToHost;
using ::testing::HasSubstr;

device::Device& DeviceWithThreads(int threads) {
  static device::Device one(0, device::PresetByName("ascend910").value(), device::DeviceOptions{.omp_threads = 1});
  static device::Device two(1, device::PresetByName("ascend910").value(), device::DeviceOptions{.omp_threads = 2});
  return threads == 1 ? one : two;
}



struct Operand {
  std::string name;
  v1::Tensor value;
};

// One node of `op` over `operands`; operands [first_weight, end) are constants
// or graph inputs as `weights_constant` says. Returns the output's bytes.
std::string RunOne(const std::string& op, const std::vector<Operand>& operands, size_t first_weight,
                   bool weights_constant, const client::Attributes& attrs, int threads) {
  client::GraphBuilder g("cube");
  std::vector<client::Value> ins;
  std::vector<HostTensor> feeds;
  for (size_t i = 0; i < operands.size(); ++i) {
    const v1::Tensor& t = operands[i].value;
    if (i >= first_weight && weights_constant) {
      ins.push_back(g.Constant(operands[i].name, t));
    } else {
      ins.push_back(g.Input(operands[i].name, t.dtype(), std::vector<int64_t>(t.shape().begin(), t.shape().end())));
      feeds.push_back(ToHost(t));
    }
  }
  g.Output(g.Op(op, ins, attrs), "y");
  device::Device& device = DeviceWithThreads(threads);
  auto plan = BuildPlan(std::make_shared<const v1::Graph>(g.Build()), device.preset());
  EXPECT_TRUE(plan.ok()) << plan.status();
  if (!plan.ok()) return "";
  auto result = RunPlan(*plan, std::move(feeds), ExecOptions{}, device);
  EXPECT_TRUE(result.ok()) << result.status();
  if (!result.ok()) return "";
  const HostTensor& y = result->outputs[0];
  return std::string(reinterpret_cast<const char*>(y.data()), y.bytes());
}

// Constant weights (packed at plan time) and fed weights (packed per run), on 1
// and 2 threads: four runs, one set of bits.
void ExpectSameBitsEveryWay(const std::string& op, const std::vector<Operand>& operands, size_t first_weight,
                            const client::Attributes& attrs = {}) {
  kernels::ScopedSmallWorkInParallel parallel;  // the small shapes on both threads too
  const std::string reference = RunOne(op, operands, first_weight, false, attrs, 1);
  ASSERT_FALSE(reference.empty());
  for (bool constant : {false, true}) {
    for (int threads : {1, 2}) {
      EXPECT_TRUE(RunOne(op, operands, first_weight, constant, attrs, threads) == reference)
          << op << ": weights " << (constant ? "constant" : "fed") << ", " << threads << " threads";
    }
  }
}

TEST(CubePrepareTest, ConstantMatMulWeightsGiveTheBitsOfFedOnes) {
  std::mt19937 rng(1);
  for (v1::DataType dt : {v1::FLOAT32, v1::FLOAT16}) {
    // 2-D, batch folded into M (B shared), batched with B per batch, and a vector.
    ExpectSameBitsEveryWay("MatMul", {{"a", RandomTensor(dt, {150, 70}, rng)}, {"w", RandomTensor(dt, {70, 300}, rng)}},
                           1);
    ExpectSameBitsEveryWay("MatMul",
                           {{"a", RandomTensor(dt, {3, 50, 40}, rng)}, {"w", RandomTensor(dt, {40, 33}, rng)}}, 1);
    ExpectSameBitsEveryWay(
        "MatMul", {{"a", RandomTensor(dt, {2, 3, 17, 33}, rng)}, {"w", RandomTensor(dt, {2, 3, 33, 20}, rng)}}, 1);
    ExpectSameBitsEveryWay("MatMul", {{"a", RandomTensor(dt, {33}, rng)}, {"w", RandomTensor(dt, {4, 33, 21}, rng)}},
                           1);
  }
}

TEST(CubePrepareTest, ConstantGemmWeightsAndBiasGiveTheBitsOfFedOnes) {
  std::mt19937 rng(2);
  for (v1::DataType dt : {v1::FLOAT32, v1::FLOAT16}) {
    for (int64_t trans_b : {0, 1}) {
      const std::vector<int64_t> w_shape = trans_b ? std::vector<int64_t>{200, 96} : std::vector<int64_t>{96, 200};
      ExpectSameBitsEveryWay("Gemm",
                             {{"a", RandomTensor(dt, {130, 96}, rng)},
                              {"w", RandomTensor(dt, w_shape, rng)},
                              {"c", RandomTensor(dt, {200}, rng)}},
                             1, {{"transB", client::AttrInt(trans_b)}});
    }
    // alpha and beta take the general path (Cube, then a Vector pass).
    ExpectSameBitsEveryWay("Gemm",
                           {{"a", RandomTensor(dt, {40, 30}, rng)},
                            {"w", RandomTensor(dt, {30, 50}, rng)},
                            {"c", RandomTensor(dt, {40, 50}, rng)}},
                           1, {{"alpha", client::AttrFloat(0.5f)}, {"beta", client::AttrFloat(2.0f)}});
  }
}

TEST(CubePrepareTest, ConstantConvWeightsGiveTheBitsOfFedOnes) {
  std::mt19937 rng(3);
  for (v1::DataType dt : {v1::FLOAT32, v1::FLOAT16}) {
    // 3 images of 3x3 stride-1 padded convolution: tiles straddle images.
    ExpectSameBitsEveryWay("Conv",
                           {{"x", RandomTensor(dt, {3, 20, 13, 11}, rng)},
                            {"w", RandomTensor(dt, {40, 20, 3, 3}, rng)},
                            {"b", RandomTensor(dt, {40}, rng)}},
                           1, {{"pads", client::AttrInts({1, 1, 1, 1})}});
    // Groups, stride 2, dilation 2, asymmetric padding, no bias.
    ExpectSameBitsEveryWay("Conv",
                           {{"x", RandomTensor(dt, {2, 8, 15, 17}, rng)}, {"w", RandomTensor(dt, {12, 2, 3, 3}, rng)}},
                           1,
                           {{"group", client::AttrInt(4)},
                            {"strides", client::AttrInts({2, 2})},
                            {"dilations", client::AttrInts({2, 2})},
                            {"pads", client::AttrInts({1, 2, 0, 1})}});
    // 1x1 (the img2col reads the planes as they are).
    ExpectSameBitsEveryWay("Conv",
                           {{"x", RandomTensor(dt, {2, 30, 9, 7}, rng)}, {"w", RandomTensor(dt, {50, 30, 1, 1}, rng)}},
                           1);
  }
}

// What float64 says for the convolution of fp16-rounded operands, and the
// bound fp32 accumulation over K terms allows (gamma_K * sum |products|).
TEST(CubePrepareTest, WholeBatchConvMatchesFloat64PerImage) {
  std::mt19937 rng(4);
  const int64_t n = 3, c = 6, h = 9, w = 10, m = 20, k = 3;
  const v1::Tensor x = RandomTensor(v1::FLOAT32, {n, c, h, w}, rng);
  const v1::Tensor wt = RandomTensor(v1::FLOAT32, {m, c, k, k}, rng);
  const std::string y = RunOne("Conv", {{"x", x}, {"w", wt}}, 1, true, {{"pads", client::AttrInts({1, 1, 1, 1})}}, 2);
  ASSERT_EQ(y.size(), static_cast<size_t>(n * m * h * w * 4));
  auto f16 = [](float v) { return static_cast<double>(kernels::HalfToFloat(kernels::FloatToHalf(v))); };
  const float* xs = reinterpret_cast<const float*>(x.data().data());
  const float* ws = reinterpret_cast<const float*>(wt.data().data());
  const float* ys = reinterpret_cast<const float*>(y.data());
  const double gamma = (c * k * k) * std::ldexp(1.0, -24) / (1 - (c * k * k) * std::ldexp(1.0, -24));
  int failures = 0;
  for (int64_t img = 0; img < n; ++img) {
    for (int64_t co = 0; co < m; ++co) {
      for (int64_t oy = 0; oy < h; ++oy) {
        for (int64_t ox = 0; ox < w; ++ox) {
          double sum = 0, abs_sum = 0;
          for (int64_t ci = 0; ci < c; ++ci) {
            for (int64_t ky = 0; ky < k; ++ky) {
              for (int64_t kx = 0; kx < k; ++kx) {
                const int64_t iy = oy - 1 + ky, ix = ox - 1 + kx;
                if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                const double p = f16(xs[((img * c + ci) * h + iy) * w + ix]) * f16(ws[((co * c + ci) * k + ky) * k + kx]);
                sum += p;
                abs_sum += std::fabs(p);
              }
            }
          }
          const double got = ys[((img * m + co) * h + oy) * w + ox];
          if (std::fabs(got - sum) > gamma * abs_sum && ++failures <= 5) {
            ADD_FAILURE() << "y[" << img << "][" << co << "][" << oy << "][" << ox << "] = " << got << ", float64 "
                          << sum;
          }
        }
      }
    }
  }
  EXPECT_EQ(failures, 0);
}

// A preset whose L0C cannot hold the smallest tile: planning refuses the graph
// naming the node and the buffer, instead of a run failing (or overrunning).
TEST(CubePrepareTest, ATileThatDoesNotFitIsRefusedWhenPlanned) {
  device::DevicePreset tiny = device::PresetByName("ascend910").value();
  tiny.l0c_bytes = 512;
  client::GraphBuilder g("mm");
  g.Output(g.MatMul(g.Input("a", v1::FLOAT32, {4, 8}), g.Input("b", v1::FLOAT32, {8, 4})), "y");
  auto plan = BuildPlan(std::make_shared<const v1::Graph>(g.Build()), tiny);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr("MatMul"));
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr("L0C"));
}

// Each Cube op run with its cancel flag already set computes no tile: its
// output keeps the bytes it had.
TEST(CubePrepareTest, GemmAndConvStopBetweenTilesOnceCancelled) {
  std::mt19937 rng(5);
  struct Case {
    std::string op;
    std::vector<Operand> operands;
  };
  const std::vector<Case> cases = {
      {"MatMul", {{"a", RandomTensor(v1::FLOAT32, {300, 64}, rng)}, {"b", RandomTensor(v1::FLOAT32, {64, 300}, rng)}}},
      {"Gemm", {{"a", RandomTensor(v1::FLOAT32, {300, 64}, rng)}, {"b", RandomTensor(v1::FLOAT32, {64, 300}, rng)}}},
      {"Conv", {{"x", RandomTensor(v1::FLOAT32, {2, 8, 30, 30}, rng)}, {"w", RandomTensor(v1::FLOAT32, {16, 8, 3, 3}, rng)}}},
  };
  const device::DevicePreset preset = device::PresetByName("ascend910").value();
  for (const Case& c : cases) {
    client::GraphBuilder g("one");
    std::vector<client::Value> ins;
    std::vector<HostTensor> inputs;
    for (const Operand& o : c.operands) {
      ins.push_back(g.Input(o.name, o.value.dtype(), std::vector<int64_t>(o.value.shape().begin(), o.value.shape().end())));
      inputs.push_back(ToHost(o.value));
    }
    g.Output(g.Op(c.op, ins), "y");
    auto plan = BuildPlan(std::make_shared<const v1::Graph>(g.Build()), preset);
    ASSERT_TRUE(plan.ok()) << plan.status();
    const PlanNode& pn = (*plan)->nodes[0];
    std::atomic<bool> cancel{true};
    RunContext ctx{*pn.node, NodeAttributes(*pn.node), {}, {}, preset, {}};
    for (const HostTensor& t : inputs) ctx.inputs.push_back(&t);
    HostTensor out = HostTensor::Allocate((*plan)->values[pn.outputs[0]].type);
    std::memset(out.mutable_data(), 0x5a, out.bytes());
    ctx.outputs.push_back(out);
    ctx.cancel = &cancel;
    ctx.state = pn.state.get();
    ASSERT_TRUE(pn.op->run(ctx).ok()) << c.op;
    const std::string untouched(out.bytes(), '\x5a');
    EXPECT_TRUE(std::string(reinterpret_cast<const char*>(out.data()), out.bytes()) == untouched)
        << c.op << " computed tiles after its run was cancelled";
  }
}

}  // namespace
}  // namespace npu::graph
