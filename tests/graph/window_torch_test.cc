// Conv, MaxPool and AveragePool validation against PyTorch on a generated
// table of geometries (tests/graph/make_window_cases.py): each case must be
// rejected exactly when torch rejects it (INVALID_ARGUMENT, naming the node),
// otherwise give torch's output shape and, for the small cases, torch's values
// (small-integer inputs, so every sum is exact and the comparison is exact).
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/generated_dir.h"
#include "tests/graph/plan_runner.h"

namespace npu::graph {
namespace {

namespace fs = std::filesystem;

template <typename T>
std::vector<T> Numbers(absl::string_view field) {
  std::vector<T> v;
  for (absl::string_view s : absl::StrSplit(field, ',', absl::SkipEmpty())) {
    T x{};
    if constexpr (std::is_same_v<T, int64_t>) {
      EXPECT_TRUE(absl::SimpleAtoi(s, &x)) << s;
    } else {
      EXPECT_TRUE(absl::SimpleAtof(s, &x)) << s;
    }
    v.push_back(x);
  }
  return v;
}

void SetInts(v1::Node* n, const std::string& name, std::vector<int64_t> values) {
  for (int64_t v : values) (*n->mutable_attributes())[name].mutable_ints()->add_values(v);
}

HostTensor Float32Tensor(const Shape& shape, const std::vector<float>& values) {
  HostTensor t = HostTensor::Allocate({v1::FLOAT32, shape});
  for (int64_t i = 0; i < t.type().elements(); ++i) {
    t.mutable_as<float>()[i] = i < static_cast<int64_t>(values.size()) ? values[i] : 0.0f;
  }
  return t;
}

// Empty when our verdict, shape and values are torch's.
std::string RunCase(const std::string& line) {
  const std::vector<std::string> f = absl::StrSplit(line, '|');
  if (f.size() != 12) return "malformed line";
  const std::string& op = f[0];
  const Shape x_shape = Numbers<int64_t>(f[1]);
  const std::vector<int64_t> kernel = Numbers<int64_t>(f[2]), strides = Numbers<int64_t>(f[3]),
                             dilations = Numbers<int64_t>(f[4]), pads = Numbers<int64_t>(f[5]);
  const bool ceil = f[6] == "1", include_pad = f[7] == "1";
  const bool torch_rejects = absl::StartsWith(f[8], "ERROR");

  v1::Graph g;
  v1::ValueInfo* x = g.add_inputs();
  x->set_name("x");
  x->set_dtype(v1::FLOAT32);
  for (int64_t d : x_shape) x->add_shape(d);
  v1::Node* n = g.add_nodes();
  n->set_name("win");
  n->set_op_type(op);
  n->add_inputs("x");
  n->add_outputs("y");
  g.add_outputs("y");
  if (op == "Conv") {
    const Shape w_shape{kernel[0], x_shape[1], kernel[1], kernel[2]};
    const std::vector<float> w_values = Numbers<float>(f[10]);
    v1::Initializer* w = g.add_initializers();
    w->set_name("w");
    w->mutable_tensor()->set_dtype(v1::FLOAT32);
    for (int64_t d : w_shape) w->mutable_tensor()->add_shape(d);
    const HostTensor wt = Float32Tensor(w_shape, w_values);
    w->mutable_tensor()->set_data(wt.data(), wt.bytes());
    n->add_inputs("w");
  } else {
    SetInts(n, "kernel_shape", kernel);
    (*n->mutable_attributes())["ceil_mode"].set_i(ceil);
  }
  if (op == "AveragePool") {
    (*n->mutable_attributes())["count_include_pad"].set_i(include_pad);
  } else {
    SetInts(n, "dilations", dilations);
  }
  SetInts(n, "strides", strides);
  SetInts(n, "pads", {pads[0], pads[1], pads[0], pads[1]});

  auto plan = BuildPlan(std::make_shared<const v1::Graph>(g), testing::DeviceFor().preset());
  if (torch_rejects) {
    if (plan.ok()) return "accepted; torch: " + f[8];
    if (plan.status().code() != absl::StatusCode::kInvalidArgument) return plan.status().ToString();
    if (!absl::StrContains(plan.status().message(), "node \"win\"")) return "unnamed: " + plan.status().ToString();
    return "";
  }
  if (!plan.ok()) return "rejected (" + std::string(plan.status().message()) + "); torch gives " + f[8];
  const Shape want = Numbers<int64_t>(f[8]);
  const Shape got = (*plan)->values[(*plan)->outputs[0]].type.shape;
  if (got != want) return "shape " + ShapeToString(got) + ", torch " + ShapeToString(want);
  if (f[11].empty()) return "";  // too big to carry values

  auto result = testing::Execute(*plan, {Float32Tensor(x_shape, Numbers<float>(f[9]))});
  if (!result.ok()) return result.status().ToString();
  const std::vector<float> ref = Numbers<float>(f[11]);
  const HostTensor& y = result->outputs[0];
  for (int64_t i = 0; i < y.type().elements(); ++i) {
    if (y.as<float>()[i] != ref[i]) {
      return absl::StrCat("element ", i, " is ", y.as<float>()[i], ", torch ", ref[i]);
    }
  }
  return "";
}

TEST(WindowTorchTest, AcceptsWhatTorchAcceptsWithItsShapesAndValues) {
  const fs::path dir = npu::testing::GeneratedDir(fs::path(NPU_SOURCE_DIR) / "tests/graph/make_window_cases.py",
                                                  fs::path(NPU_BINARY_DIR) / "window_cases");
  ASSERT_FALSE(dir.empty()) << "make_window_cases.py failed (is python3-torch installed?)";
  std::ifstream in(dir / "cases.txt");
  std::string line;
  int cases = 0, failed = 0, rejected = 0, with_values = 0;
  while (std::getline(in, line)) {
    ++cases;
    rejected += absl::StrContains(line, "|ERROR");
    with_values += !absl::EndsWith(line, "|");
    const std::string err = RunCase(line);
    if (!err.empty() && failed++ < 20) ADD_FAILURE() << line.substr(0, 120) << ": " << err;
  }
  EXPECT_EQ(failed, 0) << "of " << cases << " cases";
  EXPECT_GT(cases, 800);
  // Both verdicts well represented, and values for many of the accepted ones.
  EXPECT_GT(rejected, cases / 4);
  EXPECT_LT(rejected, cases * 3 / 4);
  EXPECT_GT(with_values, cases / 4);
}

}  // namespace
}  // namespace npu::graph
