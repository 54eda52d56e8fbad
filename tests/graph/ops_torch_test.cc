// Every op against PyTorch: tests/graph/make_op_cases.py writes cases (graph,
// inputs, torch references) once per build dir; each runs through BuildPlan +
// ExecutePlan on a simulated device and is compared within its op's tolerance.
// The tolerance table (op_tolerance.h) is the one docs/ops.md states.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "client/graph_json.h"
#include "client/npy.h"
#include "gtest/gtest.h"
#include "tests/generated_dir.h"
#include "tests/graph/op_tolerance.h"
#include "tests/graph/plan_runner.h"
#include "tests/graph/tensor_compare.h"
#include "kernels/fp16.h"
#include "server/device/device.h"
#include "server/graph/op_registry.h"
#include "server/graph/plan.h"

namespace npu::graph {
namespace {

namespace fs = std::filesystem;

// Generated once per build dir; again when a script changes. The forward
// ops' cases and the training ops' (gradients against torch.autograd).
std::vector<fs::path> CaseDirs() {
  static const std::vector<fs::path> dirs = [] {
    const fs::path src = fs::path(NPU_SOURCE_DIR) / "tests/graph";
    const std::vector<fs::path> helpers = {src / "op_cases.py", src / "dropout_mask.py", src / "rnn_reference.py",
                                           src / "cube_rounding.py"};
    return std::vector<fs::path>{
        npu::testing::GeneratedDir(src / "make_op_cases.py", fs::path(NPU_BINARY_DIR) / "op_cases", helpers),
        npu::testing::GeneratedDir(src / "make_grad_op_cases.py", fs::path(NPU_BINARY_DIR) / "grad_op_cases",
                                   helpers)};
  }();
  return dirs;
}

absl::StatusOr<HostTensor> ReadTensor(const fs::path& path) {
  auto t = client::ReadNpy(path.string());
  if (!t.ok()) return t.status();
  auto owned = std::make_shared<v1::Tensor>(std::move(*t));
  auto type = ValidateType(owned->dtype(), owned->shape(), path.string());
  if (!type.ok()) return type.status();
  auto bytes = reinterpret_cast<const std::byte*>(owned->data().data());
  return HostTensor(*type, owned, bytes);
}

struct Meta {
  std::string op, dtype, preset;
};

Meta ReadMeta(const fs::path& dir) {
  Meta m;
  std::ifstream(dir / "meta.txt") >> m.op >> m.dtype >> m.preset;
  return m;
}

// Empty when the case passes; otherwise what went wrong.
std::string RunCase(const fs::path& dir) {
  const Meta meta = ReadMeta(dir);
  auto graph = client::LoadGraphJson((dir / "graph.json").string());
  if (!graph.ok()) return std::string(graph.status().message());
  auto plan = BuildPlan(std::make_shared<const v1::Graph>(*std::move(graph)), testing::DeviceFor(meta.preset).preset());
  if (!plan.ok()) return "plan: " + std::string(plan.status().message());
  std::vector<HostTensor> inputs;
  for (int v : (*plan)->inputs) {
    auto t = ReadTensor(dir / ((*plan)->values[v].name + ".npy"));
    if (!t.ok()) return std::string(t.status().message());
    inputs.push_back(*t);
  }
  absl::StatusOr<ExecResult> result = testing::Execute(*plan, inputs, meta.preset);
  if (!result.ok()) return "run: " + std::string(result.status().message());
  auto it = ToleranceTable().find(meta.op);
  if (it == ToleranceTable().end()) return "no tolerance for " + meta.op;
  const Tolerance tol = it->second;
  std::ostringstream err;
  for (size_t o = 0; o < (*plan)->outputs.size(); ++o) {
    const std::string name = (*plan)->values[(*plan)->outputs[o]].name;
    auto ref = ReadTensor(dir / ("ref_" + name + ".npy"));
    if (!ref.ok()) return std::string(ref.status().message());
    err << CompareTensor(result->outputs[o], *ref, tol, "output " + name);
  }
  return err.str();
}

std::vector<fs::path> Cases() {
  std::vector<fs::path> cases;
  for (const fs::path& dir : CaseDirs()) {
    if (dir.empty()) return {};  // a script failed: no cases at all, so the test says so
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.is_directory()) cases.push_back(e.path());
    }
  }
  std::sort(cases.begin(), cases.end());
  return cases;
}

TEST(OpsTorchTest, EveryCaseMatchesTorch) {
  const auto cases = Cases();
  ASSERT_FALSE(cases.empty()) << "make_op_cases.py wrote no cases (is python3-torch installed?)";
  int failed = 0;
  for (const auto& c : cases) {
    const std::string err = RunCase(c);
    if (!err.empty()) {
      ++failed;
      ADD_FAILURE() << c.filename().string() << ": " << err;
    }
  }
  EXPECT_EQ(failed, 0) << "of " << cases.size() << " cases";
}

TEST(OpsTorchTest, EveryRegisteredOpHasCasesAndATolerance) {
  std::set<std::string> tested;
  for (const auto& c : Cases()) tested.insert(ReadMeta(c).op);
  for (const OpDef* op : OpRegistry::Global().All()) {
    EXPECT_TRUE(ToleranceTable().contains(op->name)) << op->name << " has no tolerance";
    EXPECT_TRUE(tested.contains(op->name)) << op->name << " has no torch case";
  }
}

TEST(OpsTorchTest, BothOverflowModesAreCovered) {
  std::set<std::string> presets;
  for (const auto& c : Cases()) {
    if (c.filename().string().find("Overflow") != std::string::npos) presets.insert(ReadMeta(c).preset);
  }
  EXPECT_TRUE(presets.contains("ascend910"));
  EXPECT_TRUE(presets.contains("ascend910b"));
}

}  // namespace
}  // namespace npu::graph
