// Rank-0 (scalar) inputs, op by op, as the ONNX spec has them: accepted where
// ONNX accepts them, with the right result (worked out by hand or in
// float64), and otherwise INVALID_ARGUMENT naming the node. Every registered op
// must appear here, so a new op states what it does with a scalar.
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "server/graph/op_registry.h"
#include "tests/graph/one_node.h"
#include "tests/graph/plan_runner.h"

namespace npu::graph {
namespace {

using testing::OneNode;

double Element(const HostTensor& t, int64_t i) {
  switch (t.type().dtype) {
    case v1::FLOAT32: return t.as<float>()[i];
    case v1::INT32: return t.as<int32_t>()[i];
    case v1::INT64: return static_cast<double>(t.as<int64_t>()[i]);
    case v1::BOOL: return t.as<uint8_t>()[i];
    default: return NAN;
  }
}

struct Case {
  std::string op;
  std::string what;                      // the case, for the failure message
  std::function<OneNode()> build;
  Shape shape;                           // expected output 0 shape, when accepted
  std::vector<double> values;            // expected output 0 values (fp32: within 1 ulp of these float64 values)
  std::string error;                     // non-empty: expected INVALID_ARGUMENT containing this
};

constexpr double kX = 0.75;  // the scalar fed to unary ops

std::vector<Case> Cases() {
  std::vector<Case> cases;
  auto ok = [&](std::string op, std::string what, std::function<OneNode()> b, Shape shape, std::vector<double> v) {
    cases.push_back({std::move(op), std::move(what), std::move(b), std::move(shape), std::move(v), ""});
  };
  auto bad = [&](std::string op, std::string what, std::function<OneNode()> b, std::string error) {
    cases.push_back({std::move(op), std::move(what), std::move(b), {}, {}, std::move(error)});
  };
  auto scalar = [](const std::string& op) {
    return [op] { return OneNode(op).Input("x", v1::FLOAT32, {}, {kX}); };
  };

  // Elementwise unary ops: a scalar in, the same scalar shape out.
  const double x = kX;
  const std::map<std::string, double> unary = {
      {"Relu", x}, {"Neg", -x}, {"Abs", x}, {"Sqrt", std::sqrt(x)}, {"Reciprocal", 1 / x}, {"Exp", std::exp(x)},
      {"Log", std::log(x)}, {"Erf", std::erf(x)}, {"Sigmoid", 1 / (1 + std::exp(-x))}, {"Tanh", std::tanh(x)},
      {"Silu", x / (1 + std::exp(-x))}, {"Gelu", 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)))},
      {"Sin", std::sin(x)}, {"Cos", std::cos(x)},
      {"LeakyRelu", x}, {"HardSigmoid", 0.2 * x + 0.5}, {"Identity", x}, {"Dropout", x}, {"Clip", x},
      {"Floor", 0}, {"Ceil", 1}, {"Round", 1}, {"Sign", 1}, {"HardSwish", x * (x + 3) / 6},
      {"Softplus", std::log1p(std::exp(x))}, {"Mish", x * std::tanh(std::log1p(std::exp(x)))}, {"Elu", x},
      {"Selu", 1.05070102214813232421875 * x}, {"Celu", x}, {"Sum", x}, {"Mean", x}};
  for (const auto& [op, want] : unary) ok(op, "scalar x", scalar(op), {}, {want});
  ok("Clip", "scalar min and max", [] {
    return OneNode("Clip").Input("x", v1::FLOAT32, {}, {5}).Const("lo", v1::FLOAT32, {}, {-1}).Const(
        "hi", v1::FLOAT32, {}, {2});
  }, {}, {2});
  ok("Cast", "scalar to INT32", [] { return OneNode("Cast").Input("x", v1::FLOAT32, {}, {2.75}).Int("to", 6); }, {},
     {2});
  ok("CastLike", "scalar like an INT32", [] {
    return OneNode("CastLike").Input("x", v1::FLOAT32, {}, {2.75}).Input("like", v1::INT32, {}, {0});
  }, {}, {2});

  // Binary ops broadcast a scalar against anything.
  const std::map<std::string, std::function<double(double, double)>> binary = {
      {"Add", [](double a, double b) { return a + b; }}, {"Sub", [](double a, double b) { return a - b; }},
      {"Mul", [](double a, double b) { return a * b; }}, {"Div", [](double a, double b) { return a / b; }},
      {"Pow", [](double a, double b) { return std::pow(a, b); }},
      {"Max", [](double a, double b) { return std::max(a, b); }},
      {"Min", [](double a, double b) { return std::min(a, b); }},
      {"PRelu", [](double a, double b) { return a > 0 ? a : a * b; }},
      {"Mod", [](double a, double b) { return a - b * std::floor(a / b); }},
      {"Sum", [](double a, double b) { return a + b; }}, {"Mean", [](double a, double b) { return (a + b) / 2; }},
      {"Equal", [](double a, double b) { return double(a == b); }},
      {"Less", [](double a, double b) { return double(a < b); }},
      {"LessOrEqual", [](double a, double b) { return double(a <= b); }},
      {"Greater", [](double a, double b) { return double(a > b); }},
      {"GreaterOrEqual", [](double a, double b) { return double(a >= b); }}};
  for (const auto& [op, f] : binary) {
    ok(op, "scalar and scalar", [op] {
      return OneNode(op).Input("a", v1::FLOAT32, {}, {1.5}).Input("b", v1::FLOAT32, {}, {2});
    }, {}, {f(1.5, 2)});
    if (op == "PRelu") {  // the slope broadcasts to X, never X to the slope
      bad(op, "scalar and [3]", [op] {
        return OneNode(op).Input("a", v1::FLOAT32, {}, {2}).Input("b", v1::FLOAT32, {3}, {1, 2, 4});
      }, "does not broadcast to X's shape");
      continue;
    }
    ok(op, "scalar and [3]", [op] {
      return OneNode(op).Input("a", v1::FLOAT32, {}, {2}).Input("b", v1::FLOAT32, {3}, {1, 2, 4});
    }, {3}, {f(2, 1), f(2, 2), f(2, 4)});
  }
  for (const auto& [op, want] : std::map<std::string, double>{{"And", 0}, {"Or", 1}, {"Xor", 1}}) {
    ok(op, "scalar masks", [op] { return OneNode(op).Input("a", v1::BOOL, {}, {1}).Input("b", v1::BOOL, {}, {0}); },
       {}, {want});
  }
  ok("Not", "scalar mask", [] { return OneNode("Not").Input("x", v1::BOOL, {}, {1}); }, {}, {0});
  ok("Where", "scalar condition", [] {
    return OneNode("Where").Input("c", v1::BOOL, {}, {1}).Input("a", v1::FLOAT32, {2}, {1, 2}).Input(
        "b", v1::FLOAT32, {}, {9});
  }, {2}, {1, 2});

  // Reductions of a scalar with no axes give the scalar; any axis is out of range.
  for (const std::string op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin"}) {
    ok(op, "scalar, no axes", scalar(op), {}, {kX});
    bad(op, "scalar, axes [0]", [op] { return OneNode(op).Input("x", v1::FLOAT32, {}, {kX}).Ints("axes", {0}); },
        "attribute \"axes\" = 0 is out of range: the input is a scalar");
  }
  ok("ReduceSum", "scalar, axes input []", [] {
    return OneNode("ReduceSum").Input("x", v1::FLOAT32, {}, {kX}).Const("axes", v1::INT64, {0}, {});
  }, {}, {kX});
  bad("ArgMax", "scalar", scalar("ArgMax"), "attribute \"axis\" = 0 is out of range: the input is a scalar");
  bad("ArgMin", "scalar", scalar("ArgMin"), "attribute \"axis\" = 0 is out of range: the input is a scalar");
  bad("Softmax", "scalar", scalar("Softmax"), "attribute \"axis\" = -1 is out of range: the input is a scalar");
  bad("LogSoftmax", "scalar", scalar("LogSoftmax"), "is out of range: the input is a scalar");
  bad("LayerNormalization", "scalar", [] {
    return OneNode("LayerNormalization").Input("x", v1::FLOAT32, {}, {kX}).Input("s", v1::FLOAT32, {}, {1});
  }, "is out of range: the input is a scalar");
  bad("BatchNormalization", "scalar", [] {
    OneNode n("BatchNormalization");
    for (const char* in : {"x", "s", "b", "m", "v"}) n.Input(in, v1::FLOAT32, {}, {1});
    return n;
  }, "needs rank >= 2");
  for (const std::string op : {"InstanceNormalization", "GroupNormalization"}) {
    bad(op, "scalar", [op] {
      OneNode n(op);
      for (const char* in : {"x", "s", "b"}) n.Input(in, v1::FLOAT32, {}, {1});
      if (op == "GroupNormalization") n.Int("num_groups", 1);
      return n;
    }, "needs rank >= 2");
  }

  // Ops with fixed ranks reject scalars.
  bad("MatMul", "scalar", [] { return OneNode("MatMul").Input("a", v1::FLOAT32, {}, {1}).Input("b", v1::FLOAT32, {}, {1}); },
      "rank >= 1");
  bad("Gemm", "scalar", [] { return OneNode("Gemm").Input("a", v1::FLOAT32, {}, {1}).Input("b", v1::FLOAT32, {}, {1}); },
      "must be 2-D");
  bad("Conv", "scalar", [] { return OneNode("Conv").Input("x", v1::FLOAT32, {}, {1}).Input("w", v1::FLOAT32, {}, {1}); },
      "only 1-D, 2-D and 3-D convolution");
  bad("ConvTranspose", "scalar",
      [] { return OneNode("ConvTranspose").Input("x", v1::FLOAT32, {}, {1}).Input("w", v1::FLOAT32, {}, {1}); },
      "only 1-D, 2-D and 3-D");
  for (const std::string op : {"LSTM", "GRU", "LSTMGrad", "GRUGrad"}) {
    bad(op, "scalar", [op] {
      return OneNode(op).Input("x", v1::FLOAT32, {}, {1}).Input("w", v1::FLOAT32, {}, {1}).Input("r", v1::FLOAT32, {}, {1});
    }, "must be [seq, batch, input]");
  }
  // numpy's einsum("->", x) is x; a scalar has no label to name.
  ok("Einsum", "scalar", [] { return OneNode("Einsum").Input("x", v1::FLOAT32, {}, {kX}).Str("equation", "->"); }, {},
     {kX});
  bad("Einsum", "a label for a scalar",
      [] { return OneNode("Einsum").Input("x", v1::FLOAT32, {}, {kX}).Str("equation", "i->i"); }, "1 labels for");
  for (const std::string op : {"MaxPool", "AveragePool", "LpPool"}) {
    bad(op, "scalar", [op] { return OneNode(op).Input("x", v1::FLOAT32, {}, {1}).Ints("kernel_shape", {1, 1}); },
        "4-D (N, C, H, W)");
  }
  bad("GlobalAveragePool", "scalar", scalar("GlobalAveragePool"), "of rank >= 3");

  // Shape ops.
  ok("Reshape", "scalar to [1]", [] {
    return OneNode("Reshape").Input("x", v1::FLOAT32, {}, {kX}).Const("s", v1::INT64, {1}, {1});
  }, {1}, {kX});
  ok("Reshape", "[1] to a scalar", [] {
    return OneNode("Reshape").Input("x", v1::FLOAT32, {1}, {kX}).Const("s", v1::INT64, {0}, {});
  }, {}, {kX});
  ok("Flatten", "scalar at axis 0", [] { return OneNode("Flatten").Input("x", v1::FLOAT32, {}, {kX}).Int("axis", 0); },
     {1, 1}, {kX});
  bad("Flatten", "scalar at the default axis 1", scalar("Flatten"), "attribute \"axis\" = 1 is out of range for rank 1");
  ok("Squeeze", "scalar, no axes", scalar("Squeeze"), {}, {kX});
  bad("Squeeze", "scalar, axes [0]", [] {
    return OneNode("Squeeze").Input("x", v1::FLOAT32, {}, {kX}).Const("axes", v1::INT64, {1}, {0});
  }, "input \"axes\" = 0 is out of range: the input is a scalar");
  ok("Unsqueeze", "scalar at axes [0, -1]", [] {
    return OneNode("Unsqueeze").Input("x", v1::FLOAT32, {}, {kX}).Const("axes", v1::INT64, {2}, {0, -1});
  }, {1, 1}, {kX});
  bad("Unsqueeze", "scalar at axis 1", [] {
    return OneNode("Unsqueeze").Input("x", v1::FLOAT32, {}, {kX}).Const("axes", v1::INT64, {1}, {1});
  }, "= 1 is out of range for rank 1");
  ok("Transpose", "scalar", scalar("Transpose"), {}, {kX});
  ok("Slice", "scalar, nothing sliced", [] {
    return OneNode("Slice").Input("x", v1::FLOAT32, {}, {kX}).Const("st", v1::INT64, {0}, {}).Const("en", v1::INT64,
                                                                                                    {0}, {});
  }, {}, {kX});
  bad("Slice", "scalar, starts [0]", [] {
    return OneNode("Slice").Input("x", v1::FLOAT32, {}, {kX}).Const("st", v1::INT64, {1}, {0}).Const("en", v1::INT64,
                                                                                                     {1}, {1});
  }, "the input is a scalar");
  ok("Expand", "scalar to [2, 3]", [] {
    return OneNode("Expand").Input("x", v1::FLOAT32, {}, {kX}).Const("s", v1::INT64, {2}, {2, 3});
  }, {2, 3}, std::vector<double>(6, kX));
  bad("Concat", "scalars", [] {
    return OneNode("Concat").Input("a", v1::FLOAT32, {}, {1}).Input("b", v1::FLOAT32, {}, {2}).Int("axis", 0);
  }, "attribute \"axis\" = 0 is out of range: the input is a scalar");
  bad("Split", "scalar", [] { return OneNode("Split").Input("x", v1::FLOAT32, {}, {1}).Outputs(2); },
      "attribute \"axis\" = 0 is out of range: the input is a scalar");
  ok("Gather", "scalar index", [] {
    return OneNode("Gather").Input("x", v1::FLOAT32, {3}, {5, 6, 7}).Const("i", v1::INT64, {}, {-1});
  }, {}, {7});
  bad("Gather", "scalar data", [] {
    return OneNode("Gather").Input("x", v1::FLOAT32, {}, {5}).Const("i", v1::INT64, {}, {0});
  }, "is a scalar");
  // Training ops: the elementwise gradients take scalars as their forward ops do.
  auto pair = [](const std::string& op, const char* saved) {
    return [op, saved] { return OneNode(op).Input("dy", v1::FLOAT32, {}, {kX}).Input(saved, v1::FLOAT32, {}, {kX}); };
  };
  const double phi = std::exp(-0.5 * x * x) / std::sqrt(2 * M_PI), cdf = 0.5 * (1 + std::erf(x / std::sqrt(2.0)));
  ok("ReluGrad", "scalars", pair("ReluGrad", "y"), {}, {kX});
  ok("SigmoidGrad", "scalars", pair("SigmoidGrad", "y"), {}, {kX * kX * (1 - kX)});
  ok("TanhGrad", "scalars", pair("TanhGrad", "y"), {}, {kX * (1 - kX * kX)});
  ok("LeakyReluGrad", "scalars", pair("LeakyReluGrad", "x"), {}, {kX});
  ok("GeluGrad", "scalars", pair("GeluGrad", "x"), {}, {kX * (cdf + x * phi)});
  bad("SoftmaxGrad", "scalars", pair("SoftmaxGrad", "y"), "is out of range: the input is a scalar");
  bad("LogSoftmaxGrad", "scalars", pair("LogSoftmaxGrad", "y"), "is out of range: the input is a scalar");
  bad("LayerNormalizationGrad", "scalars", [] {
    OneNode n("LayerNormalizationGrad");
    for (const char* in : {"dy", "x", "s", "m", "i"}) n.Input(in, v1::FLOAT32, {}, {1});
    return n.Outputs(3);
  }, "is out of range: the input is a scalar");
  bad("BatchNormalizationGrad", "scalars", [] {
    OneNode n("BatchNormalizationGrad");
    for (const char* in : {"dy", "x", "s"}) n.Input(in, v1::FLOAT32, {}, {1});
    return n.Outputs(3);
  }, "needs rank >= 2");
  for (const std::string op : {"MaxPoolGrad", "AveragePoolGrad", "LpPoolGrad"}) {
    bad(op, "scalars", [op] { return OneNode(op).Input("dy", v1::FLOAT32, {}, {1}).Input("x", v1::FLOAT32, {}, {1}).Ints(
                                  "kernel_shape", {1, 1}); },
        "4-D (N, C, H, W)");
  }
  bad("ConvGrad", "scalars", [] {
    OneNode n("ConvGrad");
    for (const char* in : {"dy", "x", "w"}) n.Input(in, v1::FLOAT32, {}, {1});
    return n;
  }, "only 1-D, 2-D and 3-D convolution");
  ok("GatherGrad", "scalar index and gradient", [] {
    return OneNode("GatherGrad").Input("dy", v1::FLOAT32, {}, {kX}).Const("i", v1::INT64, {}, {-1}).Input(
        "x", v1::FLOAT32, {3}, {5, 6, 7});
  }, {3}, {0, 0, kX});
  ok("SeededDropout", "scalar, ratio 0", [] {
    return OneNode("SeededDropout").Input("x", v1::FLOAT32, {}, {kX}).Const("r", v1::FLOAT32, {}, {0}).Input(
        "seed", v1::INT64, {}, {7});
  }, {}, {kX});
  ok("DropoutGrad", "scalar, kept", [] {
    return OneNode("DropoutGrad").Input("dy", v1::FLOAT32, {}, {kX}).Input("m", v1::BOOL, {}, {1}).Const(
        "r", v1::FLOAT32, {}, {0});
  }, {}, {kX});
  bad("SoftmaxCrossEntropyLoss", "scalar scores", [] {
    return OneNode("SoftmaxCrossEntropyLoss").Input("s", v1::FLOAT32, {}, {1}).Input("l", v1::INT64, {}, {0});
  }, "scores must be FLOAT16/FLOAT32 [N, C]");
  bad("NegativeLogLikelihoodLoss", "scalar log-probabilities", [] {
    return OneNode("NegativeLogLikelihoodLoss").Input("s", v1::FLOAT32, {}, {1}).Input("l", v1::INT64, {}, {0});
  }, "scores must be FLOAT16/FLOAT32 [N, C]");
  bad("SoftmaxCrossEntropyLossGrad", "scalar log-probabilities", [] {
    return OneNode("SoftmaxCrossEntropyLossGrad").Input("d", v1::FLOAT32, {}, {1}).Input("p", v1::FLOAT32, {}, {1}).Input(
        "l", v1::INT64, {}, {0});
  }, "scores must be FLOAT16/FLOAT32 [N, C]");
  ok("SGDUpdate", "scalars", [] {
    OneNode n("SGDUpdate");
    n.Input("p", v1::FLOAT32, {}, {kX}).Input("g", v1::FLOAT32, {}, {0.5});
    for (auto [in, v] : {std::pair{"lr", 0.1}, std::pair{"scale", 1.0}, std::pair{"found", 0.0}}) n.Input(in, v1::FLOAT32, {}, {v});
    return n;
  }, {}, {kX - 0.1f * 0.5});
  ok("AdamUpdate", "scalars, first step", [] {
    OneNode n("AdamUpdate");
    n.Input("p", v1::FLOAT32, {}, {kX}).Input("g", v1::FLOAT32, {}, {0.5}).Input("m", v1::FLOAT32, {}, {0}).Input(
        "v", v1::FLOAT32, {}, {0});
    for (auto [in, v] : {std::pair{"lr", 0.1}, std::pair{"scale", 1.0}, std::pair{"found", 0.0}}) n.Input(in, v1::FLOAT32, {}, {v});
    return n.Input("step", v1::INT64, {}, {1}).Outputs(3);
  }, {}, {kX - 0.1 * 1.0 / (1.0 + 1e-8 / 0.5)});  // the first step moves by lr: m/(sqrt(v)+eps) is 1 in exact terms
  ok("NPUGetFloatStatus", "scalar", scalar("NPUGetFloatStatus"), {}, {0});
  ok("HcclAllReduce", "scalar on one device", scalar("HcclAllReduce"), {}, {kX});
  ok("Constant", "scalar value", [] { return OneNode("Constant").Tensor("value", v1::FLOAT32, {}, {kX}); }, {}, {kX});
  ok("Shape", "of a scalar", scalar("Shape"), {0}, {});
  ok("Size", "of a scalar", scalar("Size"), {}, {1});
  ok("Pad", "scalar, no pads", [] {
    return OneNode("Pad").Input("x", v1::FLOAT32, {}, {kX}).Const("p", v1::INT64, {0}, {});
  }, {}, {kX});
  ok("Tile", "scalar, no repeats", [] {
    return OneNode("Tile").Input("x", v1::FLOAT32, {}, {kX}).Const("r", v1::INT64, {0}, {});
  }, {}, {kX});
  ok("ConstantOfShape", "scalar shape", [] {
    return OneNode("ConstantOfShape").Const("s", v1::INT64, {0}, {}).Tensor("value", v1::FLOAT32, {1}, {kX});
  }, {}, {kX});
  ok("Range", "scalar bounds", [] {
    return OneNode("Range").Const("a", v1::INT64, {}, {1}).Const("b", v1::INT64, {}, {7}).Const("d", v1::INT64, {},
                                                                                                    {2});
  }, {3}, {1, 3, 5});
  for (const std::string op :
       {"ReduceProd", "ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSumExp", "ReduceLogSum"}) {
    const std::map<std::string, double> want = {{"ReduceProd", kX},      {"ReduceL1", kX},
                                                {"ReduceL2", kX},        {"ReduceSumSquare", kX * kX},
                                                {"ReduceLogSumExp", kX}, {"ReduceLogSum", std::log(kX)}};
    ok(op, "scalar, no axes", scalar(op), {}, {want.at(op)});
  }
  bad("CumSum", "scalar", [] {
    return OneNode("CumSum").Input("x", v1::FLOAT32, {}, {kX}).Const("a", v1::INT64, {}, {0});
  }, "is out of range: the input is a scalar");
  bad("Trilu", "scalar", scalar("Trilu"), "needs rank >= 2");
  bad("GatherElements", "scalar data", [] {
    return OneNode("GatherElements").Input("x", v1::FLOAT32, {}, {kX}).Const("i", v1::INT64, {}, {0});
  }, "is a scalar");
  bad("ScatterND", "scalar indices", [] {
    return OneNode("ScatterND").Input("x", v1::FLOAT32, {2}, {1, 2}).Const("i", v1::INT64, {}, {0}).Input(
        "u", v1::FLOAT32, {}, {5});
  }, "is a scalar (needs rank >= 1)");
  bad("DepthToSpace", "scalar", [] { return OneNode("DepthToSpace").Input("x", v1::FLOAT32, {}, {kX}).Int("blocksize", 2); },
      "must be NCHW (rank 4)");
  bad("SpaceToDepth", "scalar", [] { return OneNode("SpaceToDepth").Input("x", v1::FLOAT32, {}, {kX}).Int("blocksize", 2); },
      "must be NCHW (rank 4)");
  bad("TopK", "scalar", [] {
    return OneNode("TopK").Input("x", v1::FLOAT32, {}, {kX}).Const("k", v1::INT64, {1}, {1}).Outputs(2);
  }, "is out of range: the input is a scalar");
  bad("Hardmax", "scalar", scalar("Hardmax"), "is out of range: the input is a scalar");
  bad("Resize", "scalar", [] {
    return OneNode("Resize").Input("x", v1::FLOAT32, {}, {kX}).Const("roi", v1::FLOAT32, {0}, {}).Const(
        "s", v1::FLOAT32, {0}, {});
  }, "is a scalar: nothing to resize");
  return cases;
}

// fp32 results of libm-based ops are within a couple of fp32 ulps of float64.
bool Close(double got, double want) {
  return got == want || std::fabs(got - want) <= 4 * std::ldexp(std::fabs(want), -24);
}

TEST(ScalarInputsTest, EveryOpTreatsScalarsAsOnnxDoes) {
  for (Case& c : Cases()) {
    SCOPED_TRACE(c.op + ": " + c.what);
    OneNode n = c.build();
    auto result = testing::PlanAndRun(n.graph(), n.fed());
    if (!c.error.empty()) {
      ASSERT_FALSE(result.ok()) << "accepted";
      EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_TRUE(absl::StrContains(result.status().message(), "node \"n\" (" + c.op + ")")) << result.status();
      EXPECT_TRUE(absl::StrContains(result.status().message(), c.error)) << result.status();
      continue;
    }
    ASSERT_TRUE(result.ok()) << result.status();
    const HostTensor& y = result->outputs[0];
    ASSERT_EQ(y.type().shape, c.shape) << ShapeToString(y.type().shape);
    ASSERT_EQ(y.type().elements(), static_cast<int64_t>(c.values.size()));
    for (size_t i = 0; i < c.values.size(); ++i) {
      EXPECT_TRUE(Close(Element(y, static_cast<int64_t>(i)), c.values[i]))
          << "element " << i << ": " << Element(y, static_cast<int64_t>(i)) << ", want " << c.values[i];
    }
  }
}

// Not a scalar, but the neighbouring edge: the mean over no pixels is NaN (torch's mean), not 0.
TEST(ScalarInputsTest, GlobalAveragePoolOfNoPixelsIsNaN) {
  OneNode n = OneNode("GlobalAveragePool").Input("x", v1::FLOAT32, {1, 2, 0, 3}, {});
  auto result = testing::PlanAndRun(n.graph(), n.fed());
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->outputs[0].type().shape, (Shape{1, 2, 1, 1}));
  EXPECT_TRUE(std::isnan(result->outputs[0].as<float>()[0]));
  EXPECT_TRUE(std::isnan(result->outputs[0].as<float>()[1]));
}

TEST(ScalarInputsTest, EveryRegisteredOpHasAScalarCase) {
  std::set<std::string> covered;
  for (const Case& c : Cases()) covered.insert(c.op);
  for (const OpDef* op : OpRegistry::Global().All()) {
    EXPECT_TRUE(covered.contains(op->name)) << op->name << " has no scalar-input case in scalar_inputs_test.cc";
  }
}

}  // namespace
}  // namespace npu::graph
