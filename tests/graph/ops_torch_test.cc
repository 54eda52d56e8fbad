// Every op against PyTorch: tests/graph/make_op_cases.py writes cases (graph,
// inputs, torch references) once per build dir; each runs through BuildPlan +
// ExecutePlan on a simulated device and is compared within its op's tolerance.
// The table below is the one docs/ops.md states; each row says why.
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
#include "tests/graph/plan_runner.h"
#include "kernels/fp16.h"
#include "server/device/device.h"
#include "server/graph/op_registry.h"
#include "server/graph/plan.h"

namespace npu::graph {
namespace {

namespace fs = std::filesystem;

// |got - ref| <= atol + rtol * |ref|, per output dtype.
struct Tolerance {
  double atol32, rtol32, atol16, rtol16;
  const char* why;
};

constexpr Tolerance kExact{0, 0, 0, 0, "moves or selects elements: bit-exact"};
constexpr Tolerance kIeee{0, 1e-6, 0, 1e-3,
                          "IEEE op in fp32, rounded once: equal to torch's fp32 result; fp16 within 1 ulp"};
constexpr Tolerance kTranscendental{1e-6, 1e-5, 1e-5, 2e-3,
                                    "libm in fp32 (< 1 fp32 ulp) vs torch's vectorised fp32; fp16 within the "
                                    "contract's 2 ulp"};
constexpr Tolerance kReduction{1e-5, 1e-5, 2e-3, 2e-3,
                               "fp32 sums in index order vs torch's pairwise/vectorised order; fp16 2 ulp"};
constexpr Tolerance kRowNorm{1e-5, 1e-5, 2e-3, 2e-3,
                             "max/exp/sum (or mean/var) in fp32, summation order differs from torch; fp16 2 ulp"};
constexpr Tolerance kCube{1e-5, 1e-5, 1e-3, 1e-3,
                          "reference rounds operands to fp16 (as the Cube does) and sums in float64: left is fp32 "
                          "accumulation order; fp16 output 1 ulp"};

const std::map<std::string, Tolerance>& ToleranceTable() {
  static const auto* table = new std::map<std::string, Tolerance>{
      {"Abs", kExact}, {"Neg", kExact}, {"Relu", kExact}, {"Max", kExact}, {"Min", kExact},
      {"Equal", kExact}, {"Less", kExact}, {"Greater", kExact}, {"Where", kExact}, {"Cast", kExact},
      {"Clip", kExact}, {"MaxPool", kExact}, {"ReduceMax", kExact}, {"ReduceMin", kExact}, {"ArgMax", kExact},
      {"Transpose", kExact}, {"Reshape", kExact}, {"Flatten", kExact}, {"Squeeze", kExact},
      {"Unsqueeze", kExact}, {"Concat", kExact}, {"Split", kExact}, {"Slice", kExact}, {"Gather", kExact},
      {"Expand", kExact}, {"Identity", kExact}, {"Dropout", kExact}, {"Constant", kExact}, {"Shape", kExact},
      {"Add", kIeee}, {"Sub", kIeee}, {"Mul", kIeee}, {"Div", kIeee}, {"Sqrt", kIeee}, {"Reciprocal", kIeee},
      {"LeakyRelu", kIeee}, {"HardSigmoid", kIeee},
      {"Pow", kTranscendental}, {"Exp", kTranscendental}, {"Log", kTranscendental}, {"Erf", kTranscendental},
      {"Sigmoid", kTranscendental}, {"Tanh", kTranscendental}, {"Silu", kTranscendental},
      {"Gelu", kTranscendental},
      {"ReduceSum", kReduction}, {"ReduceMean", kReduction}, {"AveragePool", kReduction},
      {"GlobalAveragePool", kReduction},
      {"Softmax", kRowNorm}, {"LogSoftmax", kRowNorm}, {"LayerNormalization", kRowNorm},
      {"BatchNormalization", kRowNorm},
      {"MatMul", kCube}, {"Gemm", kCube}, {"Conv", kCube},
  };
  return *table;
}

// Generated once per build dir; again when the script changes.
fs::path CaseDir() {
  static const fs::path dir = npu::testing::GeneratedDir(fs::path(NPU_SOURCE_DIR) / "tests/graph/make_op_cases.py",
                                                         fs::path(NPU_BINARY_DIR) / "op_cases");
  return dir;
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

std::vector<double> AsDoubles(const HostTensor& t) {
  const int64_t n = t.type().elements();
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    switch (t.type().dtype) {
      case v1::FLOAT16: v[i] = kernels::HalfToFloat(t.as<kernels::half_bits>()[i]); break;
      case v1::FLOAT32: v[i] = t.as<float>()[i]; break;
      case v1::INT32: v[i] = t.as<int32_t>()[i]; break;
      case v1::INT8: v[i] = t.as<int8_t>()[i]; break;
      case v1::BOOL: v[i] = t.as<uint8_t>()[i]; break;
      case v1::INT64: v[i] = static_cast<double>(t.as<int64_t>()[i]); break;
      default: break;
    }
  }
  return v;
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
    const HostTensor& got = result->outputs[o];
    if (!(got.type() == ref->type())) {
      return "output " + name + ": got " + ToString(got.type()) + ", torch " + ToString(ref->type());
    }
    const bool half = got.type().dtype == v1::FLOAT16;
    const double atol = half ? tol.atol16 : tol.atol32, rtol = half ? tol.rtol16 : tol.rtol32;
    const std::vector<double> g = AsDoubles(got), r = AsDoubles(*ref);
    int bad = 0;
    for (size_t i = 0; i < g.size(); ++i) {
      const bool ok = (std::isnan(g[i]) && std::isnan(r[i])) || g[i] == r[i] ||
                      std::fabs(g[i] - r[i]) <= atol + rtol * std::fabs(r[i]);
      if (!ok && bad++ < 3) err << "output " << name << "[" << i << "]: got " << g[i] << ", torch " << r[i] << "; ";
    }
    if (bad > 0) err << bad << " of " << g.size() << " elements off (atol " << atol << ", rtol " << rtol << ")";
  }
  return err.str();
}

std::vector<fs::path> Cases() {
  std::vector<fs::path> cases;
  const fs::path dir = CaseDir();
  if (dir.empty()) return cases;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_directory()) cases.push_back(e.path());
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
