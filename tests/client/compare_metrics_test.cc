// npu compare's metrics and verdicts (client/cli/compare_metrics.h): each of
// msprobe's rules on a case that just crosses it and one that just does not,
// the metrics against a float64 computation written here.
#include "client/cli/compare_metrics.h"

#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "client/cli/compare_command.h"

namespace npu::client::cli {
namespace {

ComparedTensor T(std::vector<double> values, std::vector<int64_t> shape = {}, std::string dtype = "float32") {
  if (shape.empty() && values.size() != 1) shape = {static_cast<int64_t>(values.size())};
  return {std::move(dtype), std::move(shape), std::move(values)};
}

TEST(CompareMetrics, MetricsAreMsprobesOnFloat64) {
  std::mt19937 rng(3);
  std::normal_distribution<double> d;
  std::vector<double> b(1000), n(1000);
  for (size_t i = 0; i < b.size(); ++i) {
    b[i] = d(rng);
    n[i] = b[i] * (1 + 0.004 * d(rng));  // relative errors around 0.004
  }
  n[10] = b[10] = 0.0;  // a zero bench element: eps on both sides, relative error 0
  const TensorComparison c = CompareTensors(T(n), T(b));
  double dot = 0, nn = 0, bb = 0, sq = 0, max_abs = 0, max_rel = 0;
  int r1 = 0, r5 = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    dot += n[i] * b[i], nn += n[i] * n[i], bb += b[i] * b[i], sq += (n[i] - b[i]) * (n[i] - b[i]);
    max_abs = std::max(max_abs, std::abs(n[i] - b[i]));
    const double rel = b[i] == 0 ? 0.0 : std::abs((n[i] - b[i]) / b[i]);
    max_rel = std::max(max_rel, rel);
    r1 += rel < 0.001, r5 += rel < 0.005;
  }
  EXPECT_NEAR(*c.cosine.value, dot / std::sqrt(nn * bb), 1e-15);
  EXPECT_NEAR(*c.euc_dist.value, std::sqrt(sq), 1e-12);
  EXPECT_DOUBLE_EQ(*c.max_abs_err.value, max_abs);
  EXPECT_DOUBLE_EQ(*c.max_relative_err.value, max_rel);
  EXPECT_DOUBLE_EQ(*c.one_thousandth.value, r1 / 1000.0);
  EXPECT_DOUBLE_EQ(*c.five_thousandth.value, r5 / 1000.0);
  EXPECT_GT(r1, 100);
  EXPECT_LT(r1, 400);  // the case exercises both sides of the threshold
  EXPECT_EQ(c.result, Verdict::kPass);  // cosine ~0.99999: msprobe's accuracy check holds
}

TEST(CompareMetrics, TheAccuracyCheckDecidesErrors) {
  // Cosine < 0.99 and MaxAbsErr > 0.001: error; the same cosine with MaxAbsErr <= 0.001 passes.
  EXPECT_EQ(CompareTensors(T({1, 0}), T({1, 0.2})).result, Verdict::kError);           // cos 0.981, err 0.2
  EXPECT_EQ(CompareTensors(T({1e-3, 0}), T({1e-3, 1.9e-4})).result, Verdict::kPass);    // cos 0.982, err 1.9e-4
  // Cosine < 0.9 alone is an error, however small the values.
  EXPECT_EQ(CompareTensors(T({1e-6, 0}), T({0, 1e-6})).result, Verdict::kError);
  // MaxAbsErr > 1 alone is an error, however good the cosine.
  EXPECT_EQ(CompareTensors(T({1e6, 2e6}), T({1e6 + 1.5, 2e6})).result, Verdict::kError);
  EXPECT_EQ(CompareTensors(T({1e6, 2e6}), T({1e6 + 0.5, 2e6})).result, Verdict::kPass);
}

TEST(CompareMetrics, InfAndNanMustSitAtTheSamePositions) {
  const double inf = INFINITY, nan = NAN;
  const TensorComparison same = CompareTensors(T({inf, 1, nan, 2}), T({inf, 1, nan, 2}));
  EXPECT_EQ(same.result, Verdict::kPass);  // set to 0 on both sides, the rest compared
  EXPECT_DOUBLE_EQ(*same.cosine.value, 1.0);
  const TensorComparison moved = CompareTensors(T({inf, 1, 3, 2}), T({65504, 1, 3, 2}));
  EXPECT_EQ(moved.result, Verdict::kError);
  EXPECT_NE(moved.err_message.find("The position of inf or nan in NPU and bench Tensor do not match."),
            std::string::npos);
  EXPECT_FALSE(moved.cosine.value.has_value());
  EXPECT_EQ(CompareTensors(T({nan, 1}), T({inf, 1})).result, Verdict::kError);  // NaN is not inf
}

TEST(CompareMetrics, ShapeAndDtypeMismatches) {
  const TensorComparison shape = CompareTensors(T({1, 2, 3, 4}, {2, 2}), T({1, 2, 3, 4}, {4}));
  EXPECT_EQ(shape.result, Verdict::kError);
  EXPECT_NE(shape.err_message.find("Shape of NPU and bench tensor do not match"), std::string::npos);
  const TensorComparison dtype = CompareTensors(T({1, 2}, {2}, "float16"), T({1, 2}, {2}, "float32"));
  EXPECT_EQ(dtype.result, Verdict::kWarning);
  EXPECT_NE(dtype.err_message.find("Dtype of NPU and bench tensor do not match."), std::string::npos);
}

TEST(CompareMetrics, ZerosScalarsAndSingleElements) {
  EXPECT_DOUBLE_EQ(*CompareTensors(T({0, 0}), T({0, 0})).cosine.value, 1.0);  // both all zero
  const TensorComparison npu_zero = CompareTensors(T({0, 0}), T({1e-3, 0}));
  EXPECT_FALSE(npu_zero.cosine.value.has_value());
  EXPECT_EQ(npu_zero.cosine.Text(), "N/A");
  EXPECT_EQ(npu_zero.result, Verdict::kError);  // an N/A cosine fails the accuracy check
  EXPECT_NE(npu_zero.err_message.find("All the data is Zero in npu dump data"), std::string::npos);
  const TensorComparison scalar = CompareTensors(T({2.0}, {}), T({2.5}, {}));
  EXPECT_EQ(scalar.cosine.Text(), "unsupported");
  EXPECT_EQ(scalar.one_thousandth.Text(), "unsupported");
  EXPECT_DOUBLE_EQ(*scalar.max_abs_err.value, 0.5);
  EXPECT_EQ(scalar.result, Verdict::kPass);  // MaxAbsErr 0.5 <= 1 decides
  const TensorComparison one = CompareTensors(T({2.0}, {1}), T({4.0}, {1}));
  EXPECT_EQ(one.cosine.Text(), "unsupported");
  EXPECT_EQ(one.result, Verdict::kError);  // MaxAbsErr 2 > 1
}

TEST(CompareMetrics, AnOutputIsJudgedAgainstItsNodesInputs) {
  TensorComparison in, out;
  in.one_thousandth = {0.95, ""}, in.cosine = {0.9999, ""}, in.max_abs_err = {0.5, ""};
  out.one_thousandth = {0.55, ""}, out.cosine = {0.9999, ""}, out.max_abs_err = {0.5, ""};
  ApplyInputRules({&in}, out);
  EXPECT_EQ(out.result, Verdict::kError);  // > 0.9 in, < 0.6 out
  out = {};
  out.one_thousandth = {0.61, ""};
  ApplyInputRules({&in}, out);
  EXPECT_EQ(out.result, Verdict::kWarning);  // dropped by 0.34
  out = {};
  out.one_thousandth = {0.86, ""};
  ApplyInputRules({&in}, out);
  EXPECT_EQ(out.result, Verdict::kPass);  // dropped by 0.09
  out = {};
  out.cosine = {0.85, ""};
  ApplyInputRules({&in}, out);
  EXPECT_EQ(out.result, Verdict::kWarning);  // cosine dropped by 0.15
  TensorComparison big_in, big_out;
  big_in.max_abs_err = {2.0, ""}, big_out.max_abs_err = {25.0, ""};
  ApplyInputRules({&big_in}, big_out);
  EXPECT_EQ(big_out.result, Verdict::kWarning);  // an order of magnitude more
  big_out = {};
  big_out.max_abs_err = {19.0, ""};
  ApplyInputRules({&big_in}, big_out);
  EXPECT_EQ(big_out.result, Verdict::kPass);
}

TEST(CompareMetrics, ModuleScopeFromTorchsNodeNames) {
  EXPECT_EQ(ModuleScope("/layer1/layer1.0/conv1/Conv"), "layer1.0.conv1");
  EXPECT_EQ(ModuleScope("/layer1/layer1.0/layer1.0.conv1/Conv"), "layer1.0.conv1");
  EXPECT_EQ(ModuleScope("/fc/Gemm"), "fc");
  EXPECT_EQ(ModuleScope("/Relu"), "");
  EXPECT_EQ(ModuleScope("MatMul_0"), "");
}

}  // namespace
}  // namespace npu::client::cli
