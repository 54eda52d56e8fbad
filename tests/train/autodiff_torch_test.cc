// Whole graphs differentiated by AppendBackward against torch.autograd:
// tests/train/make_autodiff_cases.py writes forward graphs (MLP, broadcasting
// arithmetic, CNN with BatchNorm in training, attention-like shape ops, MSE,
// seeded dropout, Gemm with every attribute) with random shapes and torch's
// gradients, and make_op_grad_cases.py one case per op with a gradient rule
// (per attribute form); each is extended with its backward pass, planned and
// run on a simulated device.
//
// Tolerance, from the numerics: every op computes in fp32 (relative error
// ~1e-6 after a few ops) and the Cube rounds its operands to fp16, which the
// reference does too; where our fp32 value and torch's float64 value of an
// operand lie on two sides of an fp16 rounding boundary (about one element in
// 2^13), that product is off by up to 2^-11 of its size. So each gradient
// must agree within 2e-3 of its largest element (as the ONNX end-to-end
// tests), and the loss within 2e-3 relative.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "client/graph_json.h"
#include "client/npy.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "server/device/device.h"
#include "server/graph/runner.h"
#include "server/train/autodiff.h"
#include "tests/generated_dir.h"

namespace npu::train {
namespace {

namespace fs = std::filesystem;

fs::path CaseDir() {
  static const fs::path dir = npu::testing::GeneratedDir(
      fs::path(NPU_SOURCE_DIR) / "tests/train/make_autodiff_cases.py", fs::path(NPU_BINARY_DIR) / "autodiff_cases",
      {fs::path(NPU_SOURCE_DIR) / "tests/train/graph_reference.py", fs::path(NPU_SOURCE_DIR) / "tests/graph/op_cases.py",
       fs::path(NPU_SOURCE_DIR) / "tests/graph/dropout_mask.py"});
  return dir;
}

// One op at a time, every attribute form (make_op_grad_cases.py).
fs::path OpCaseDir() {
  static const fs::path dir = npu::testing::GeneratedDir(
      fs::path(NPU_SOURCE_DIR) / "tests/train/make_op_grad_cases.py", fs::path(NPU_BINARY_DIR) / "op_grad_cases",
      {fs::path(NPU_SOURCE_DIR) / "tests/train/graph_reference.py",
       fs::path(NPU_SOURCE_DIR) / "tests/train/graph_reference_nn.py",
       fs::path(NPU_SOURCE_DIR) / "tests/graph/rnn_reference.py", fs::path(NPU_SOURCE_DIR) / "tests/graph/cube_rounding.py",
       fs::path(NPU_SOURCE_DIR) / "tests/graph/op_cases.py"});
  return dir;
}

device::Device& TestDevice() {
  static device::Device d(0, device::PresetByName("ascend910").value(), device::DeviceOptions{});
  return d;
}

graph::HostTensor ReadNpy(const fs::path& path) {
  auto t = client::ReadNpy(path.string());
  EXPECT_TRUE(t.ok()) << t.status();
  auto owned = std::make_shared<v1::Tensor>(std::move(*t));
  auto type = graph::ValidateType(owned->dtype(), owned->shape(), path.string());
  return graph::HostTensor(*type, owned, reinterpret_cast<const std::byte*>(owned->data().data()));
}

std::vector<std::string> Lines(const fs::path& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) {
    if (!l.empty()) lines.push_back(l);
  }
  return lines;
}

// max |got - ref| / max |ref| (the largest element's scale).
double RelativeMaxError(const graph::HostTensor& got, const graph::HostTensor& ref) {
  double err = 0, scale = 1e-30;
  for (int64_t i = 0; i < ref.type().elements(); ++i) {
    err = std::max(err, std::fabs(double{got.as<float>()[i]} - ref.as<float>()[i]));
    scale = std::max(scale, std::fabs(double{ref.as<float>()[i]}));
  }
  return err / scale;
}

void CheckCase(const fs::path& dir) {
  SCOPED_TRACE(dir.filename().string());
  auto forward = client::LoadGraphJson((dir / "graph.json").string());
  ASSERT_TRUE(forward.ok()) << forward.status();
  v1::Graph graph = *std::move(forward);
  const std::vector<std::string> wrt = Lines(dir / "wrt.txt");
  auto grads = AppendBackward(graph, {"loss", "dloss", wrt}, TestDevice().preset());
  ASSERT_TRUE(grads.ok()) << grads.status();
  for (const std::string& g : *grads) graph.add_outputs(g);
  auto plan = graph::BuildPlan(std::make_shared<const v1::Graph>(graph), TestDevice().preset());
  ASSERT_TRUE(plan.ok()) << plan.status();
  std::vector<graph::HostTensor> inputs;
  for (int v : (*plan)->inputs) {
    const std::string& name = (*plan)->values[v].name;
    if (name == "dloss") {
      graph::HostTensor one = graph::HostTensor::Allocate({v1::FLOAT32, {}});
      one.mutable_as<float>()[0] = 1.0f;
      inputs.push_back(one);
    } else {
      inputs.push_back(ReadNpy(dir / absl::StrCat(name, ".npy")));
    }
  }
  auto result = graph::RunPlan(*plan, inputs, graph::ExecOptions{}, TestDevice());
  ASSERT_TRUE(result.ok()) << result.status();
  const graph::HostTensor ref_loss = ReadNpy(dir / "ref_loss.npy");
  EXPECT_NEAR(result->outputs[0].as<float>()[0], ref_loss.as<float>()[0], 2e-3 * std::fabs(ref_loss.as<float>()[0]));
  for (size_t i = 0; i < wrt.size(); ++i) {
    const graph::HostTensor ref = ReadNpy(dir / absl::StrCat("ref_grad_", wrt[i], ".npy"));
    const graph::HostTensor& got = result->outputs[i + 1];
    ASSERT_EQ(got.type(), ref.type()) << wrt[i];
    EXPECT_LE(RelativeMaxError(got, ref), 2e-3) << "gradient of " << wrt[i];
  }
}

std::vector<fs::path> Cases(const fs::path& dir) {
  std::vector<fs::path> cases;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_directory()) cases.push_back(e.path());
  }
  std::sort(cases.begin(), cases.end());
  return cases;
}

TEST(AutodiffTorchTest, GradientsOfWholeGraphsMatchTorchAutograd) {
  const fs::path dir = CaseDir();
  ASSERT_FALSE(dir.empty()) << "make_autodiff_cases.py failed (is python3-torch installed?)";
  const std::vector<fs::path> cases = Cases(dir);
  ASSERT_GE(cases.size(), 22u);
  for (const fs::path& c : cases) CheckCase(c);
}

TEST(AutodiffTorchTest, GradientOfEachOpMatchesTorchAutograd) {
  const fs::path dir = OpCaseDir();
  ASSERT_FALSE(dir.empty()) << "make_op_grad_cases.py failed";
  const std::vector<fs::path> cases = Cases(dir);
  ASSERT_GE(cases.size(), 91u);
  for (const fs::path& c : cases) CheckCase(c);
}

}  // namespace
}  // namespace npu::train
