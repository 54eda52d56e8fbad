// Slice against NumPy on random and extreme starts, ends and steps (INT64_MIN
// and INT64_MAX included): tests/graph/make_slice_cases.py writes the table
// (see its header for the one clamp where ONNX and NumPy differ); each case
// runs through BuildPlan + ExecutePlan and must give NumPy's shape and values.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/generated_dir.h"
#include "tests/graph/plan_runner.h"

namespace npu::graph {
namespace {

namespace fs = std::filesystem;

std::vector<int64_t> Ints(absl::string_view field) {
  std::vector<int64_t> v;
  for (absl::string_view s : absl::StrSplit(field, ',', absl::SkipEmpty())) {
    int64_t i = 0;
    EXPECT_TRUE(absl::SimpleAtoi(s, &i)) << s;
    v.push_back(i);
  }
  return v;
}

void AddIntsInitializer(v1::Graph& g, const std::string& name, const std::vector<int64_t>& values) {
  v1::Initializer* init = g.add_initializers();
  init->set_name(name);
  init->mutable_tensor()->set_dtype(v1::INT64);
  init->mutable_tensor()->add_shape(static_cast<int64_t>(values.size()));
  init->mutable_tensor()->set_data(values.data(), values.size() * sizeof(int64_t));
}

struct SliceCase {
  std::string line;
  Shape shape;
  std::vector<int64_t> starts, ends, axes, steps;
  bool has_axes = false, has_steps = false, error = false;
  Shape want_shape;
  std::vector<int64_t> want;
};

SliceCase Parse(const std::string& line) {
  const std::vector<std::string> f = absl::StrSplit(line, '|');
  SliceCase c;
  c.line = line;
  EXPECT_EQ(f.size(), 7u) << line;
  if (f.size() != 7) return c;
  c.shape = Ints(f[0]);
  c.starts = Ints(f[1]);
  c.ends = Ints(f[2]);
  c.has_axes = f[3] != "-";
  c.has_steps = f[4] != "-";
  if (c.has_axes) c.axes = Ints(f[3]);
  if (c.has_steps) c.steps = Ints(f[4]);
  c.error = f[5] == "ERROR";
  if (!c.error) c.want_shape = Ints(f[5]);
  c.want = Ints(f[6]);
  return c;
}

// x = arange(n) as INT32 of c.shape, sliced by one Slice node.
std::string RunCase(const SliceCase& c) {
  v1::Graph g;
  v1::ValueInfo* x = g.add_inputs();
  x->set_name("x");
  x->set_dtype(v1::INT32);
  for (int64_t d : c.shape) x->add_shape(d);
  AddIntsInitializer(g, "starts", c.starts);
  AddIntsInitializer(g, "ends", c.ends);
  v1::Node* n = g.add_nodes();
  n->set_name("s");
  n->set_op_type("Slice");
  std::vector<std::string> inputs = {"x", "starts", "ends"};
  if (c.has_axes || c.has_steps) inputs.push_back(c.has_axes ? "axes" : "");  // "" omits axes
  if (c.has_axes) AddIntsInitializer(g, "axes", c.axes);
  if (c.has_steps) {
    inputs.push_back("steps");
    AddIntsInitializer(g, "steps", c.steps);
  }
  for (const std::string& in : inputs) *n->add_inputs() = in;
  *n->add_outputs() = "y";
  *g.add_outputs() = "y";

  const TensorType type{v1::INT32, c.shape};
  HostTensor input = HostTensor::Allocate(type);
  for (int64_t i = 0; i < type.elements(); ++i) input.mutable_as<int32_t>()[i] = static_cast<int32_t>(i);
  auto result = testing::PlanAndRun(g, {input});
  if (c.error) {
    if (result.ok()) return "accepted a slice NumPy rejects";
    if (result.status().code() != absl::StatusCode::kInvalidArgument) return result.status().ToString();
    return "";
  }
  if (!result.ok()) return result.status().ToString();
  const HostTensor& y = result->outputs[0];
  if (y.type().shape != c.want_shape) {
    return absl::StrCat("shape ", ShapeToString(y.type().shape), ", NumPy ", ShapeToString(c.want_shape));
  }
  for (int64_t i = 0; i < y.type().elements(); ++i) {
    if (y.as<int32_t>()[i] != c.want[i]) {
      return absl::StrCat("element ", i, " is ", y.as<int32_t>()[i], ", NumPy ", c.want[i]);
    }
  }
  return "";
}

TEST(SliceNumpyTest, EveryCaseMatchesNumPy) {
  const fs::path dir = npu::testing::GeneratedDir(fs::path(NPU_SOURCE_DIR) / "tests/graph/make_slice_cases.py",
                                                  fs::path(NPU_BINARY_DIR) / "slice_cases");
  ASSERT_FALSE(dir.empty()) << "make_slice_cases.py failed (is python3-numpy installed?)";
  std::ifstream in(dir / "cases.txt");
  std::string line;
  int cases = 0, failed = 0, nonempty = 0;
  while (std::getline(in, line)) {
    const SliceCase c = Parse(line);
    ++cases;
    nonempty += !c.want.empty();
    const std::string err = RunCase(c);
    if (!err.empty() && failed++ < 20) ADD_FAILURE() << c.line << ": " << err;
  }
  EXPECT_EQ(failed, 0) << "of " << cases << " cases";
  EXPECT_GT(cases, 500);
  EXPECT_GT(nonempty, cases / 4) << "the table should mostly take elements";
}

}  // namespace
}  // namespace npu::graph
