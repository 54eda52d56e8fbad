// Fusion on the planned graph (fusion.h): a fused plan gives the unfused
// plan's bits for every chain (Cube epilogues in both C layouts, Vector chains,
// fp32 and fp16, 1 and 2 host threads, the saturating preset and not); a
// folded BatchNormalization stays within the bound docs/ops.md states against
// a float64 evaluation of the unfused graph; chains whose values are read
// elsewhere stay unfused; the profile names a fused node after all of its
// nodes; a debug run refuses a fused plan; a BatchNormalization in training
// mode (batch statistics) is never folded.
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
using client::AttrInts;
using client::AttrTensor;
using client::GraphBuilder;
using client::Value;
using ::testing::HasSubstr;

device::Device& DeviceFor(const std::string& preset, int threads) {
  static std::map<std::pair<std::string, int>, std::unique_ptr<device::Device>> devices;
  auto& d = devices[{preset, threads}];
  if (!d) {
    d = std::make_unique<device::Device>(0, device::PresetByName(preset).value(),
                                         device::DeviceOptions{.omp_threads = threads});
  }
  return *d;
}


v1::Tensor Scalar(v1::DataType dtype, float v) {
  v1::Tensor t;
  t.set_dtype(dtype);
  if (dtype == v1::FLOAT16) {
    const kernels::half_bits h = kernels::FloatToHalf(v);
    t.set_data(&h, 2);
  } else {
    t.set_data(&v, 4);
  }
  return t;
}

struct Feed {
  std::string name;
  v1::Tensor value;
};


struct Outcome {
  std::vector<std::string> outputs;  // bytes of each graph output
  size_t nodes = 0;
  v1::Profile profile;
};

Outcome RunGraph(const v1::Graph& graph, const std::vector<Feed>& feeds, bool fuse, const std::string& preset = "ascend910",
            int threads = 2) {
  device::Device& device = DeviceFor(preset, threads);
  auto plan = BuildPlan(std::make_shared<const v1::Graph>(graph), device.preset(), {}, PlanOptions{.fuse = fuse});
  EXPECT_TRUE(plan.ok()) << plan.status();
  if (!plan.ok()) return {};
  std::vector<HostTensor> inputs;
  for (const Feed& f : feeds) inputs.push_back(ToHost(f.value));
  auto result = RunPlan(*plan, std::move(inputs), ExecOptions{.profile = true}, device);
  EXPECT_TRUE(result.ok()) << result.status();
  if (!result.ok()) return {};
  Outcome o;
  for (const HostTensor& t : result->outputs) o.outputs.emplace_back(reinterpret_cast<const char*>(t.data()), t.bytes());
  o.nodes = (*plan)->nodes.size();
  o.profile = result->profile;
  return o;
}

// The fused plan has `fused_nodes` nodes, the unfused one more, and both give
// the same bits on both presets (fp16 saturation on and off) and thread counts.
void ExpectFusedEqualsUnfused(const v1::Graph& graph, const std::vector<Feed>& feeds, size_t fused_nodes) {
  kernels::ScopedSmallWorkInParallel parallel;  // the small graphs on both threads too
  for (const std::string preset : {"ascend910", "ascend910b"}) {
    const Outcome unfused = RunGraph(graph, feeds, false, preset, 1);
    ASSERT_FALSE(unfused.outputs.empty());
    for (int threads : {1, 2}) {
      const Outcome fused = RunGraph(graph, feeds, true, preset, threads);
      EXPECT_EQ(fused.nodes, fused_nodes) << preset;
      EXPECT_GT(unfused.nodes, fused.nodes) << preset;
      ASSERT_EQ(fused.outputs.size(), unfused.outputs.size());
      for (size_t i = 0; i < fused.outputs.size(); ++i) {
        EXPECT_TRUE(fused.outputs[i] == unfused.outputs[i])
            << "output " << i << " differs fused / unfused on " << preset << ", " << threads << " threads";
      }
    }
  }
}

std::vector<int64_t> ShapeOf(const v1::Tensor& t) { return std::vector<int64_t>(t.shape().begin(), t.shape().end()); }

Value In(GraphBuilder& g, std::vector<Feed>& feeds, const std::string& name, v1::Tensor t) {
  feeds.push_back({name, t});
  return g.Input(name, t.dtype(), ShapeOf(t));
}

TEST(FusionTest, ResidualBlockRunsAsTwoConvsWithTheirEpilogues) {
  std::mt19937 rng(1);
  for (v1::DataType dt : {v1::FLOAT32, v1::FLOAT16}) {
    GraphBuilder g("block");
    std::vector<Feed> feeds;
    Value x = In(g, feeds, "x", RandomTensor(dt, {2, 8, 9, 11}, rng));
    const client::Attributes pad{{"pads", AttrInts({1, 1, 1, 1})}};
    Value c1 = g.Op("Conv", {x, g.Constant("w1", RandomTensor(dt, {8, 8, 3, 3}, rng)), g.Constant("b1", RandomTensor(dt, {8}, rng))}, pad);
    Value r1 = g.Relu(c1);
    Value c2 = g.Op("Conv", {r1, g.Constant("w2", RandomTensor(dt, {8, 8, 3, 3}, rng))}, pad);
    Value down = g.Op("Conv", {x, g.Constant("w3", RandomTensor(dt, {8, 8, 1, 1}, rng))});
    g.Output(g.Relu(g.Add(c2, down)), "y");
    // conv1+relu, conv2+add(down)+relu, down: three nodes of six.
    ExpectFusedEqualsUnfused(g.Build(), feeds, 3);
  }
}

TEST(FusionTest, ConvWithClipFromConstantNodesAndSiluFuse) {
  std::mt19937 rng(2);
  for (v1::DataType dt : {v1::FLOAT32, v1::FLOAT16}) {
    GraphBuilder g("mobile");
    std::vector<Feed> feeds;
    Value x = In(g, feeds, "x", RandomTensor(dt, {1, 6, 10, 10}, rng, -4, 4));
    Value c = g.Op("Conv", {x, g.Constant("w", RandomTensor(dt, {16, 6, 1, 1}, rng, -2, 2))});
    // ReLU6 as torch exports it: Clip with bounds from Constant nodes.
    Value lo = g.Op("Constant", {}, {{"value", AttrTensor(Scalar(dt, 0))}});
    Value hi = g.Op("Constant", {}, {{"value", AttrTensor(Scalar(dt, 6))}});
    Value r6 = g.Op("Clip", {c, lo, hi});
    // SiLU as torch exports it: x * sigmoid(x).
    Value c2 = g.Op("Conv", {r6, g.Constant("w2", RandomTensor(dt, {16, 16, 3, 3}, rng)), g.Constant("b2", RandomTensor(dt, {16}, rng))},
                    {{"pads", AttrInts({1, 1, 1, 1})}});
    g.Output(g.Mul(c2, g.Op("Sigmoid", {c2})), "y");
    ExpectFusedEqualsUnfused(g.Build(), feeds, 2);
  }
}

uint64_t TotalOverflow(const v1::Profile& p) {
  uint64_t total = 0;
  for (const v1::NodeProfile& n : p.nodes()) total += n.overflow_elements();
  return total;
}

// MobileNetV2's inverted residual: the depthwise Conv (group = channels) runs on
// the Vector stencil and takes its ReLU6 as the Cube Convs do. Inputs large
// enough that fp16 results overflow: the fused nodes count what the separate
// ones counted. A BatchNormalization after a grouped Conv is not folded (the
// stencil computes in fp32), so that chain stays as it was.
TEST(FusionTest, DepthwiseConvTakesItsEpilogue) {
  std::mt19937 rng(8);
  for (v1::DataType dt : {v1::FLOAT32, v1::FLOAT16}) {
    GraphBuilder g("inverted_residual");
    std::vector<Feed> feeds;
    Value x = In(g, feeds, "x", RandomTensor(dt, {2, 4, 9, 7}, rng, -300, 300));
    Value lo = g.Constant("lo", Scalar(dt, 0)), hi = g.Constant("hi", Scalar(dt, 6));
    Value e = g.Op("Clip", {g.Op("Conv", {x, g.Constant("we", RandomTensor(dt, {12, 4, 1, 1}, rng))}), lo, hi});
    Value dw = g.Op("Conv", {e, g.Constant("wd", RandomTensor(dt, {12, 1, 3, 3}, rng, -20000, 20000)),
                             g.Constant("bd", RandomTensor(dt, {12}, rng))},
                    {{"group", client::AttrInt(12)}, {"pads", AttrInts({1, 1, 1, 1})}, {"strides", AttrInts({1, 1})}});
    Value p = g.Op("Conv", {g.Op("Clip", {dw, lo, hi}), g.Constant("wp", RandomTensor(dt, {4, 12, 1, 1}, rng))});
    g.Output(g.Add(p, x), "y");
    // A grouped Conv (2 channels a group) with fed weights, then BatchNormalization and Relu.
    Value wf = In(g, feeds, "wf", RandomTensor(dt, {4, 2, 3, 3}, rng));
    Value gc = g.Op("Conv", {x, wf}, {{"group", client::AttrInt(2)}});
    Value bn = g.Op("BatchNormalization", {gc, g.Constant("gamma", RandomTensor(dt, {4}, rng, 0.5, 1.5)),
                                           g.Constant("beta", RandomTensor(dt, {4}, rng)),
                                           g.Constant("mean", RandomTensor(dt, {4}, rng)),
                                           g.Constant("var", RandomTensor(dt, {4}, rng, 0.5, 1.5))});
    g.Output(g.Relu(bn), "z");
    const v1::Graph graph = g.Build();
    // Conv+Clip, Conv+Clip (depthwise), Conv+Add; the grouped Conv, BatchNormalization, Relu.
    ExpectFusedEqualsUnfused(graph, feeds, 6);
    for (const std::string preset : {"ascend910", "ascend910b"}) {
      const uint64_t unfused = TotalOverflow(RunGraph(graph, feeds, false, preset).profile);
      EXPECT_EQ(TotalOverflow(RunGraph(graph, feeds, true, preset).profile), unfused) << preset;
      if (dt == v1::FLOAT16) EXPECT_GT(unfused, 0u) << "the inputs should overflow fp16 somewhere";
    }
  }
}

TEST(FusionTest, MatMulWithBiasAndErfGeluFusesLikeTorchExportsIt) {
  std::mt19937 rng(3);
  for (v1::DataType dt : {v1::FLOAT32, v1::FLOAT16}) {
    GraphBuilder g("ffn");
    std::vector<Feed> feeds;
    Value x = In(g, feeds, "x", RandomTensor(dt, {3, 20, 48}, rng));
    Value h = g.Add(g.Constant("b1", RandomTensor(dt, {96}, rng)), g.MatMul(x, g.Constant("w1", RandomTensor(dt, {48, 96}, rng))));
    // F.gelu as torch 1.13 exports it at opset 17.
    Value e = g.Op("Erf", {g.Op("Div", {h, g.Constant("sqrt2", Scalar(dt, 1.4142135f))})});
    Value gelu = g.Mul(g.Mul(h, g.Add(e, g.Constant("one", Scalar(dt, 1)))), g.Constant("half", Scalar(dt, 0.5f)));
    // The second projection with its bias and the residual, then LayerNorm's input.
    Value o = g.Add(g.MatMul(gelu, g.Constant("w2", RandomTensor(dt, {96, 48}, rng))), g.Constant("b2", RandomTensor(dt, {48}, rng)));
    g.Output(g.Add(x, o), "y");
    ExpectFusedEqualsUnfused(g.Build(), feeds, 2);
  }
}

TEST(FusionTest, BatchedMatMulAndGemmEpilogues) {
  std::mt19937 rng(4);
  for (v1::DataType dt : {v1::FLOAT32, v1::FLOAT16}) {
    GraphBuilder g("attention");
    std::vector<Feed> feeds;
    Value q = In(g, feeds, "q", RandomTensor(dt, {2, 3, 17, 16}, rng));
    Value k = In(g, feeds, "k", RandomTensor(dt, {2, 3, 16, 17}, rng));
    Value s = g.Op("Div", {g.MatMul(q, k), g.Constant("scale", Scalar(dt, 4.0f))});
    g.Output(g.Op("Softmax", {s}, {{"axis", client::AttrInt(-1)}}), "p");
    Value a = In(g, feeds, "a", RandomTensor(dt, {40, 30}, rng));
    Value fc = g.Op("Gemm", {a, g.Constant("w", RandomTensor(dt, {50, 30}, rng)), g.Constant("c", RandomTensor(dt, {50}, rng))},
                    {{"transB", client::AttrInt(1)}});
    g.Output(g.Relu(fc), "fc");
    // MatMul+Div, Softmax, Gemm+Relu.
    ExpectFusedEqualsUnfused(g.Build(), feeds, 3);
  }
}

TEST(FusionTest, VectorChainsRunAsOnePass) {
  std::mt19937 rng(5);
  for (v1::DataType dt : {v1::FLOAT32, v1::FLOAT16}) {
    GraphBuilder g("vector");
    std::vector<Feed> feeds;
    Value x = In(g, feeds, "x", RandomTensor(dt, {4, 300}, rng, -3, 3));
    Value b = In(g, feeds, "b", RandomTensor(dt, {300}, rng));
    // SiLU after a non-Cube op, then a broadcast scale and a clamp.
    Value silu = g.Mul(g.Op("Sigmoid", {x}), x);
    Value y = g.Op("Clip", {g.Mul(g.Add(silu, b), g.Constant("s", RandomTensor(dt, {4, 1}, rng))),
                            g.Constant("lo", Scalar(dt, -0.5f)), g.Constant("hi", Scalar(dt, 0.5f))});
    g.Output(y, "y");
    ExpectFusedEqualsUnfused(g.Build(), feeds, 1);
  }
}

// A value read outside its chain, or a graph output, ends the chain there: the
// results still match and the outside reader sees the value.
TEST(FusionTest, ValuesReadOutsideAChainStayUnfused) {
  std::mt19937 rng(6);
  GraphBuilder g("escape");
  std::vector<Feed> feeds;
  Value x = In(g, feeds, "x", RandomTensor(v1::FLOAT32, {2, 4, 6, 6}, rng));
  Value c = g.Op("Conv", {x, g.Constant("w", RandomTensor(v1::FLOAT32, {4, 4, 3, 3}, rng))}, {{"pads", AttrInts({1, 1, 1, 1})}});
  Value r = g.Relu(c);
  g.Output(r, "r");                // a graph output: the chain stops at it
  g.Output(g.Op("Exp", {r}), "e");
  Value s = g.Op("Sigmoid", {x});  // read by the Mul and by the ReduceSum: stays unfused
  g.Output(g.Mul(s, x), "m");
  g.Output(g.Op("ReduceSum", {s}, {{"keepdims", client::AttrInt(0)}}), "sum");
  const v1::Graph graph = g.Build();
  const Outcome unfused = RunGraph(graph, feeds, false);
  const Outcome fused = RunGraph(graph, feeds, true);
  EXPECT_EQ(fused.nodes, unfused.nodes - 1);  // only Conv+Relu
  EXPECT_TRUE(fused.outputs == unfused.outputs);
}

TEST(FusionTest, TheProfileNamesAFusedNodeAfterItsNodes) {
  std::mt19937 rng(7);
  GraphBuilder g("names");
  std::vector<Feed> feeds;
  Value x = In(g, feeds, "x", RandomTensor(v1::FLOAT32, {8, 16}, rng));
  Value y = g.Relu(g.Add(g.MatMul(x, g.Constant("w", RandomTensor(v1::FLOAT32, {16, 32}, rng))),
                         g.Constant("b", RandomTensor(v1::FLOAT32, {32}, rng))));
  g.Output(y, "y");
  const Outcome fused = RunGraph(g.Build(), feeds, true);
  ASSERT_EQ(fused.profile.nodes_size(), 1);
  const v1::NodeProfile& n = fused.profile.nodes(0);
  EXPECT_EQ(n.name(), "MatMul_0+Add_0+Relu_0");
  EXPECT_EQ(n.op_type(), "MatMul+Add+Relu");
  EXPECT_THAT(std::vector<std::string>(n.fused_nodes().begin(), n.fused_nodes().end()),
              ::testing::ElementsAre("MatMul_0", "Add_0", "Relu_0"));
  EXPECT_EQ(n.task_type(), "AI_CORE");
}

TEST(FusionTest, ADebugRunNeedsAnUnfusedPlan) {
  std::mt19937 rng(8);
  GraphBuilder g("debug");
  std::vector<Feed> feeds;
  Value x = In(g, feeds, "x", RandomTensor(v1::FLOAT32, {4, 8}, rng));
  g.Output(g.Relu(g.Op("Exp", {x})), "y");
  device::Device& device = DeviceFor("ascend910", 1);
  auto fused = BuildPlan(std::make_shared<const v1::Graph>(g.Build()), device.preset());
  ASSERT_TRUE(fused.ok());
  ASSERT_TRUE((*fused)->fused);
  auto refused = RunPlan(*fused, {ToHost(feeds[0].value)}, ExecOptions{.debug = true}, device);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  auto unfused = BuildPlan(std::make_shared<const v1::Graph>(g.Build()), device.preset(), {}, PlanOptions{.fuse = false});
  ASSERT_TRUE(unfused.ok());
  auto debug = RunPlan(*unfused, {ToHost(feeds[0].value)}, ExecOptions{.debug = true}, device);
  ASSERT_TRUE(debug.ok()) << debug.status();
  EXPECT_EQ(debug->intermediates.size(), 2u);  // Exp's and Relu's outputs
}

// Training mode normalises with the batch's own statistics, which no
// constant folding can know: the Conv and the BatchNormalization stay two
// nodes and the fused plan gives the unfused plan's bits.
TEST(FusionTest, ATrainingModeBatchNormIsNotFolded) {
  std::mt19937 rng(4);
  GraphBuilder g("bn_training");
  std::vector<Feed> feeds;
  Value x = In(g, feeds, "x", RandomTensor(v1::FLOAT32, {4, 3, 5, 5}, rng, -2, 2));
  Value conv = g.Op("Conv", {x, g.Constant("w", RandomTensor(v1::FLOAT32, {6, 3, 3, 3}, rng))},
                    {{"pads", AttrInts({1, 1, 1, 1})}});
  Value bn = g.Op("BatchNormalization",
                  {conv, g.Constant("gamma", RandomTensor(v1::FLOAT32, {6}, rng, 0.5f, 2.0f)),
                   g.Constant("beta", RandomTensor(v1::FLOAT32, {6}, rng, -1, 1)),
                   g.Constant("mean", RandomTensor(v1::FLOAT32, {6}, rng, -1, 1)),
                   g.Constant("var", RandomTensor(v1::FLOAT32, {6}, rng, 0.5f, 2.0f))},
                  {{"training_mode", client::AttrInt(1)}});
  g.Output(bn, "y");
  const v1::Graph graph = g.Build();
  const Outcome fused = RunGraph(graph, feeds, true);
  const Outcome unfused = RunGraph(graph, feeds, false);
  EXPECT_EQ(fused.nodes, 2u);
  ASSERT_EQ(fused.outputs.size(), 1u);
  ASSERT_EQ(unfused.outputs.size(), 1u);
  EXPECT_TRUE(fused.outputs[0] == unfused.outputs[0]);
}

// Folding BatchNormalization into a Conv scales the weights before their one
// rounding to fp16: round16(a w) instead of a round16(w). Per output element,
// against a float64 evaluation of the unfused graph (the same fp16 operands):
//   |y_fused - y_unfused| <= 2^-10 |a| sum |w x| (each weight's two roundings)
//                            + 2 gamma_K (|a| sum |w x| + |a b| + |s|)  (fp32 sums, both sides)
//                            + 2^-22 |y|  (the affine step's own roundings)
// with a = gamma / sqrt(var + eps), s = beta - mean a, gamma_K = K u / (1 - K u), u = 2^-24.
TEST(FusionTest, FoldedBatchNormStaysWithinItsStatedBound) {
  std::mt19937 rng(9);
  const int64_t n = 2, c = 5, h = 7, w = 6, m = 12, k = 3;
  GraphBuilder g("bn");
  std::vector<Feed> feeds;
  const v1::Tensor xt = RandomTensor(v1::FLOAT32, {n, c, h, w}, rng, -2, 2);
  const v1::Tensor wt = RandomTensor(v1::FLOAT32, {m, c, k, k}, rng);
  const v1::Tensor bt = RandomTensor(v1::FLOAT32, {m}, rng);
  const v1::Tensor gamma = RandomTensor(v1::FLOAT32, {m}, rng, 0.1f, 4.0f), beta = RandomTensor(v1::FLOAT32, {m}, rng, -1, 1);
  const v1::Tensor mean = RandomTensor(v1::FLOAT32, {m}, rng, -1, 1), var = RandomTensor(v1::FLOAT32, {m}, rng, 0.05f, 3.0f);
  Value x = In(g, feeds, "x", xt);
  Value conv = g.Op("Conv", {x, g.Constant("w", wt), g.Constant("b", bt)}, {{"pads", AttrInts({1, 1, 1, 1})}});
  Value bn = g.Op("BatchNormalization", {conv, g.Constant("gamma", gamma), g.Constant("beta", beta),
                                          g.Constant("mean", mean), g.Constant("var", var)});
  g.Output(bn, "y");
  const v1::Graph graph = g.Build();
  const Outcome fused = RunGraph(graph, feeds, true);
  const Outcome unfused = RunGraph(graph, feeds, false);
  ASSERT_EQ(fused.nodes, 1u);
  ASSERT_EQ(unfused.nodes, 2u);
  auto f = [](const v1::Tensor& t, int64_t i) { return reinterpret_cast<const float*>(t.data().data())[i]; };
  auto f16 = [](float v) { return static_cast<double>(kernels::HalfToFloat(kernels::FloatToHalf(v))); };
  const float* yf = reinterpret_cast<const float*>(fused.outputs[0].data());
  const float* yu = reinterpret_cast<const float*>(unfused.outputs[0].data());
  const double u = std::ldexp(1.0, -24), kk = static_cast<double>(c * k * k);
  const double gamma_k = kk * u / (1 - kk * u);
  int failures = 0, differ = 0;
  for (int64_t img = 0; img < n; ++img) {
    for (int64_t co = 0; co < m; ++co) {
      const double a = f(gamma, co) / std::sqrt(static_cast<double>(f(var, co)) + 1e-5);
      const double s = f(beta, co) - f(mean, co) * a;
      for (int64_t oy = 0; oy < h; ++oy) {
        for (int64_t ox = 0; ox < w; ++ox) {
          double abs_sum = 0;
          for (int64_t ci = 0; ci < c; ++ci) {
            for (int64_t ky = 0; ky < k; ++ky) {
              for (int64_t kx = 0; kx < k; ++kx) {
                const int64_t iy = oy - 1 + ky, ix = ox - 1 + kx;
                if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                abs_sum += std::fabs(f16(f(xt, ((img * c + ci) * h + iy) * w + ix)) * f(wt, ((co * c + ci) * k + ky) * k + kx));
              }
            }
          }
          const int64_t i = ((img * m + co) * h + oy) * w + ox;
          const double bound = std::ldexp(std::fabs(a) * abs_sum, -10) +
                               2 * gamma_k * (std::fabs(a) * abs_sum + std::fabs(a * f(bt, co)) + std::fabs(s)) +
                               std::ldexp(std::fabs(static_cast<double>(yu[i])), -22);
          differ += yf[i] != yu[i];
          if (std::fabs(static_cast<double>(yf[i]) - yu[i]) > bound && ++failures <= 5) {
            ADD_FAILURE() << "y[" << i << "]: fused " << yf[i] << ", unfused " << yu[i] << ", bound " << bound;
          }
        }
      }
    }
  }
  EXPECT_EQ(failures, 0);
  EXPECT_GT(differ, 0) << "folding changed no rounding: the test would not see a wrong fold";
}

}  // namespace
}  // namespace npu::graph
