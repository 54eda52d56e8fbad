// What a declared shape alone may make the planner do: it models an op's
// device work before any data arrives, so a model cannot ask for unbounded
// plan-time memory (a fuzzer finding: a Conv over an input declared
// [1, 1, 5, 2^31 - 1] asked for gigabytes of Cube tile records and ran the
// fuzzer out of memory, at registration, with no tensor sent).
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "onnx/onnx_import.h"
#include "server/graph/ops/cube_problem.h"
#include "server/graph/passes/prepare_graph.h"
#include "tests/graph/plan_runner.h"

namespace npu::graph {
namespace {

using ::testing::HasSubstr;

void AddInput(v1::Graph& g, const std::string& name, v1::DataType dtype, const std::vector<int64_t>& shape) {
  v1::ValueInfo* v = g.add_inputs();
  v->set_name(name);
  v->set_dtype(dtype);
  for (int64_t d : shape) v->add_shape(d);
}

v1::Graph ConvOver(int64_t width, int64_t out_channels) {
  v1::Graph g;
  v1::ValueInfo* x = g.add_inputs();
  x->set_name("x");
  x->set_dtype(v1::FLOAT32);
  for (int64_t d : {int64_t{1}, int64_t{1}, int64_t{5}, width}) x->add_shape(d);
  v1::ValueInfo* w = g.add_inputs();
  w->set_name("w");
  w->set_dtype(v1::FLOAT32);
  for (int64_t d : {out_channels, int64_t{1}, int64_t{3}, int64_t{3}}) w->add_shape(d);
  v1::Node* n = g.add_nodes();
  n->set_name("conv");
  n->set_op_type("Conv");
  n->add_inputs("x");
  n->add_inputs("w");
  n->add_outputs("y");
  g.add_outputs("y");
  return g;
}

TEST(PlanBoundsTest, ACubeOpOfTooManyTilesIsRefusedBeforeItsTilesAreModeled) {
  // x is 2.5 GiB, within the default input limit (4 GiB); its output row is 400 M pixels.
  auto plan = PreparePlan(std::make_shared<const v1::Graph>(ConvOver(int64_t{1} << 27, 1)), nullptr,
                          testing::DeviceFor().preset(), {});
  ASSERT_FALSE(plan.ok());

  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(plan.status().message(), HasSubstr("\"conv\""));
  EXPECT_THAT(plan.status().message(), HasSubstr("Cube tiles, past the 262144 one op may take"));
  // A large but servable one plans.
  EXPECT_TRUE(PreparePlan(std::make_shared<const v1::Graph>(ConvOver(4096, 64)), nullptr,
                          testing::DeviceFor().preset(), {})
                  .ok());
}

// A recurrent op models one GEMM per step: a GRU over a million steps of a
// tiny state asked for a million tile records (the next fuzzer finding).
TEST(PlanBoundsTest, ARecurrentOpOfTooManyStepsIsRefusedBeforeItsStepsAreModeled) {
  auto gru = [](int64_t seq) {
    v1::Graph g;
    AddInput(g, "X", v1::FLOAT32, {seq, 3, 2});
    AddInput(g, "W", v1::FLOAT32, {1, 15, 2});
    AddInput(g, "R", v1::FLOAT32, {1, 15, 5});
    v1::Node* n = g.add_nodes();
    n->set_name("gru");
    n->set_op_type("GRU");
    for (const char* in : {"X", "W", "R"}) n->add_inputs(in);
    n->add_outputs("Y");
    (*n->mutable_attributes())["hidden_size"].set_i(5);
    g.add_outputs("Y");
    return std::make_shared<const v1::Graph>(g);
  };
  // A hidden_size past int64 / 3 (gates x hidden_size overflowed: UBSan, found by the onnx fuzzer) is refused.
  auto huge = std::make_shared<v1::Graph>(*gru(4));
  (*huge->mutable_nodes(0)->mutable_attributes())["hidden_size"].set_i(INT64_MAX);
  auto refused = PreparePlan(huge, nullptr, testing::DeviceFor().preset(), {});
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("attribute \"hidden_size\" = 9223372036854775807 does not match"));
  auto plan = PreparePlan(gru(1 << 20), nullptr, testing::DeviceFor().preset(), {});
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.status().message(), HasSubstr("its 1048576 recurrent steps take"));
  EXPECT_TRUE(PreparePlan(gru(1000), nullptr, testing::DeviceFor().preset(), {}).ok());
}

// An empty tensor may have a huge other dim ([0, 2^31 - 1, 3]: no elements,
// so no bytes to send): the ops that loop over an axis's rows must not visit
// its billions of empty ones (a fuzzer finding: Hardmax along axis 0 ran for
// minutes). The executor runs no kernel whose outputs are all empty, so each
// op here, whatever its loops, returns at once with empty outputs; and so does
// constant folding at plan time when the empty tensor is an initializer.
TEST(PlanBoundsTest, AnEmptyTensorWithAHugeDimRunsInNoTime) {
  struct Case {
    std::string op;
    int64_t axis;            // the "axis" attribute, or the axis input's value
    std::string axis_input;  // set: the axis (or k) is this int64 input
  };
  for (const Case& c : std::vector<Case>{{"Hardmax", 0, ""},
                                         {"TopK", 0, "k"},
                                         {"Softmax", 0, ""},
                                         {"LogSoftmax", 0, ""},
                                         {"ReduceMax", 1, ""},
                                         {"ArgMax", 1, ""},
                                         {"CumSum", 0, "axis"}}) {
    for (const bool constant : {false, true}) {
      SCOPED_TRACE(c.op + (constant ? " of an initializer" : " of an input"));
      v1::Graph g;
      const std::vector<int64_t> shape = {0, 2147483647, 3};
      if (constant) {
        v1::Initializer* x = g.add_initializers();
        x->set_name("x");
        x->mutable_tensor()->set_dtype(v1::FLOAT32);
        for (int64_t d : shape) x->mutable_tensor()->add_shape(d);
      } else {
        v1::ValueInfo* x = g.add_inputs();
        x->set_name("x");
        x->set_dtype(v1::FLOAT32);
        for (int64_t d : shape) x->add_shape(d);
      }
      v1::Node* n = g.add_nodes();
      n->set_name("op");
      n->set_op_type(c.op);
      n->add_inputs("x");
      n->add_outputs("y");
      if (c.op == "ReduceMax") {
        (*n->mutable_attributes())["axes"].mutable_ints()->add_values(c.axis);
      } else if (c.axis_input.empty()) {
        (*n->mutable_attributes())["axis"].set_i(c.axis);
      } else {
        v1::Initializer* a = g.add_initializers();
        a->set_name(c.axis_input);
        a->mutable_tensor()->set_dtype(v1::INT64);
        if (c.op == "TopK") a->mutable_tensor()->add_shape(1);  // k is [1]; CumSum's axis a scalar
        const int64_t value = c.op == "TopK" ? 0 : c.axis;
        a->mutable_tensor()->set_data(&value, sizeof value);
        n->add_inputs(c.axis_input);
        if (c.op == "TopK") {
          (*n->mutable_attributes())["axis"].set_i(c.axis);
          n->add_outputs("i");
        }
      }
      g.add_outputs("y");
      auto plan = PreparePlan(std::make_shared<const v1::Graph>(g), nullptr, testing::DeviceFor().preset(), {});
      ASSERT_TRUE(plan.ok()) << plan.status();
      std::vector<HostTensor> inputs;
      if (!constant) inputs.push_back(HostTensor::Allocate({v1::FLOAT32, shape}));
      auto result = testing::Execute(*plan, std::move(inputs));
      ASSERT_TRUE(result.ok()) << result.status();
      EXPECT_EQ(result->outputs[0].type().elements(), 0);
    }
  }
}

// A reduction of an empty tensor has outputs (the identity) although its input
// has no elements, and a reduced dim beside the 0 may be huge: ReduceSum of
// [2^37, 5, 0] over axes 0 and 2 is five zeros, computed without listing the
// 2^37 offsets of an input that holds nothing (a fuzzer finding: a 16 GiB
// allocation for a dim of 2^31).
TEST(PlanBoundsTest, AReductionOfAnEmptyTensorWithAHugeDimIsItsIdentity) {
  v1::Graph g;
  v1::ValueInfo* x = g.add_inputs();
  x->set_name("x");
  x->set_dtype(v1::FLOAT32);
  for (int64_t d : {int64_t{1} << 37, int64_t{5}, int64_t{0}}) x->add_shape(d);
  v1::Node* n = g.add_nodes();
  n->set_name("sum");
  n->set_op_type("ReduceSum");
  n->add_inputs("x");
  n->add_inputs("axes");
  n->add_outputs("y");
  v1::Initializer* axes = g.add_initializers();
  axes->set_name("axes");
  axes->mutable_tensor()->set_dtype(v1::INT64);
  axes->mutable_tensor()->add_shape(2);
  const int64_t values[] = {0, 2};
  axes->mutable_tensor()->set_data(values, sizeof values);
  g.add_outputs("y");
  auto plan = PreparePlan(std::make_shared<const v1::Graph>(g), nullptr, testing::DeviceFor().preset(), {});
  ASSERT_TRUE(plan.ok()) << plan.status();
  auto result = testing::Execute(*plan, {HostTensor::Allocate({v1::FLOAT32, {int64_t{1} << 37, 5, 0}})});
  ASSERT_TRUE(result.ok()) << result.status();
  const HostTensor& y = result->outputs[0];
  ASSERT_EQ(y.type().shape, (Shape{1, 5, 1}));
  for (int i = 0; i < 5; ++i) EXPECT_EQ(y.as<float>()[i], 0.0f) << i;
}

// Attribute values and dims each within their own checks whose products or
// sums pass int64 (an audit of the ops' arithmetic, session 10; each model
// here made UBSan report signed overflow in the onnx fuzzer's build, and is
// replayed there from tests/fuzz/regressions/onnx). Each is refused by name,
// or plans and runs, and the numbers it computes wrap as ONNX's integers do.
TEST(PlanBoundsTest, ProductsOfHostileAttributesAreBoundedOrRefused) {
  struct Case {
    std::string file;
    std::string refusal;  // empty: it plans (and runs, with no inputs to send)
  };
  const std::vector<Case> cases = {
      {"maxpool_kernel_2e32", "taps, past the 1099511627776 a pool may take"},
      {"avgpool_kernel_2e32", "taps, past the 1099511627776 a pool may take"},
      {"pad_int64_min", "pad -9223372036854775808 is outside [-1099511627776, 1099511627776]"},
      {"einsum_summed_2e80", ""},  // an empty output: nothing to sum
      {"einsum_output_2e80", "the output"},
      {"conv_transpose_stride_int64_max", ""},
      {"space_to_depth_empty_constant", ""},
      {"scatternd_int64_add_wraps", ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    std::ifstream in(std::filesystem::path(NPU_SOURCE_DIR) / "tests/fuzz/regressions/onnx" / (c.file + ".onnx"),
                     std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    ASSERT_FALSE(bytes.str().empty());
    auto imported = onnxio::ImportOnnxBytes(bytes.str());
    ASSERT_TRUE(imported.ok()) << imported.status();
    auto plan =
        PreparePlan(std::make_shared<const v1::Graph>(imported->graph), nullptr, testing::DeviceFor().preset(), {});
    if (!c.refusal.empty()) {
      ASSERT_FALSE(plan.ok());
      EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument) << plan.status();
      EXPECT_THAT(plan.status().message(), HasSubstr(c.refusal));
      EXPECT_THAT(plan.status().message(), HasSubstr("node \""));
      continue;
    }
    ASSERT_TRUE(plan.ok()) << plan.status();
    if (c.file == "scatternd_int64_add_wraps") {  // folded at plan time: INT64_MAX + 1 wraps
      auto result = testing::Execute(*plan, {});
      ASSERT_TRUE(result.ok()) << result.status();
      EXPECT_EQ(result->outputs[0].as<int64_t>()[0], INT64_MIN);
    }
  }
}

// ConvGrad with an empty batch still writes dW, sized from one image's
// columns [K, P] that no GEMM tile count bounds then: K x P past int64 is
// refused by name (it overflowed, with kernel taps 2^24 and 2^40 pixels).
TEST(PlanBoundsTest, AConvGradOfAnEmptyBatchBoundsItsColumns) {
  v1::Graph g;
  AddInput(g, "x", v1::FLOAT16, {0, 1, 1, 1});
  AddInput(g, "w", v1::FLOAT16, {1, 1, 4096, 4096});
  AddInput(g, "dy", v1::FLOAT16, {0, 1, 1044482, 1044482});
  v1::Node* n = g.add_nodes();
  n->set_name("grad");
  n->set_op_type("ConvGrad");
  for (const char* in : {"dy", "x", "w"}) n->add_inputs(in);
  n->add_outputs("dw");
  n->add_outputs("dx");
  for (int i = 0; i < 4; ++i) (*n->mutable_attributes())["pads"].mutable_ints()->add_values(int64_t{1} << 19);
  g.add_outputs("dw");
  auto plan = PreparePlan(std::make_shared<const v1::Graph>(g), nullptr, testing::DeviceFor().preset(), {});
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.status().message(), HasSubstr("one image's columns"));
}

}  // namespace
}  // namespace npu::graph
