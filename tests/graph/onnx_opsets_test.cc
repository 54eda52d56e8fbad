// The importer reads a model's opset (onnx/opsets.h): the default domain must
// be there once and served; ops, attributes and inputs from another opset
// than the model's are refused naming the op and both opsets; ops that
// computed something else at the model's opset run as that opset says
// (opset-11 Softmax coerces to 2-D, checked against float64). The docs'
// table is the code's.
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "onnx/onnx_export.h"
#include "onnx/onnx_import.h"
#include "onnx/opsets.h"
#include "server/graph/passes/prepare_graph.h"
#include "tests/doc_section.h"
#include "tests/graph/plan_runner.h"

namespace npu::graph {
namespace {

using ::testing::HasSubstr;

void SetOpset(::onnx::ModelProto& m, int opset, const std::string& domain = "") {
  auto* o = m.add_opset_import();
  o->set_domain(domain);
  o->set_version(opset);
}

void AddInput(::onnx::GraphProto* g, const std::string& name, std::vector<int64_t> dims) {
  auto* v = g->add_input();
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(::onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
}

::onnx::NodeProto* AddNode(::onnx::GraphProto* g, const std::string& op, std::vector<std::string> in,
                           std::vector<std::string> out, const std::string& name = "") {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name.empty() ? op + "_node" : name);
  for (auto& i : in) n->add_input(i);
  for (auto& o : out) n->add_output(o);
  return n;
}

void IntAttr(::onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INT);
  a->set_i(v);
}

void IntsAttr(::onnx::NodeProto* n, const std::string& name, std::vector<int64_t> v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

void AddInt64Initializer(::onnx::GraphProto* g, const std::string& name, std::vector<int64_t> values) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(::onnx::TensorProto::INT64);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) t->add_int64_data(v);
}

// x [2, 3, 4] -> op -> y.
::onnx::ModelProto OneOp(const std::string& op, int opset, std::vector<int64_t> dims = {2, 3, 4}) {
  ::onnx::ModelProto m;
  m.set_ir_version(7);
  SetOpset(m, opset);
  auto* g = m.mutable_graph();
  AddInput(g, "x", dims);
  AddNode(g, op, {"x"}, {"y"}, "n");
  g->add_output()->set_name("y");
  return m;
}

std::string ImportError(::onnx::ModelProto m) {
  auto imported = onnxio::ImportOnnxModel(std::move(m));
  EXPECT_FALSE(imported.ok());
  return imported.ok() ? "" : std::string(imported.status().message());
}

TEST(OnnxOpsetsTest, TheDefaultDomainMustBeImportedOnceAndServed) {
  ::onnx::ModelProto none = OneOp("Relu", 13);
  none.clear_opset_import();
  SetOpset(none, 1, "com.example");
  EXPECT_THAT(ImportError(none), HasSubstr("imports no opset of the default ONNX domain"));
  EXPECT_THAT(ImportError(OneOp("Relu", 1)), HasSubstr("imports opset 1 of the default ONNX domain; the server "
                                                          "serves opsets 7-21"));
  EXPECT_THAT(ImportError(OneOp("Relu", 99)), HasSubstr("imports opset 99"));
  ::onnx::ModelProto twice = OneOp("Relu", 13);
  SetOpset(twice, 14, "ai.onnx");
  EXPECT_THAT(ImportError(twice), HasSubstr("imports the default ONNX domain 2 times"));
  for (int opset = onnxio::kMinServedOpset; opset <= onnxio::kMaxServedOpset; ++opset) {
    EXPECT_TRUE(onnxio::ImportOnnxModel(OneOp("Relu", opset)).ok()) << opset;
  }
  ::onnx::ModelProto named = OneOp("Relu", 13);
  named.clear_opset_import();
  SetOpset(named, 13, "ai.onnx");
  SetOpset(named, 3, "ai.onnx.ml");
  EXPECT_TRUE(onnxio::ImportOnnxModel(named).ok());
}

// Softmax over x [2, 3, 4] as `opset` defines it with `axis` (absent: -2 means
// the attribute is left out), in float64.
std::vector<double> SoftmaxReference(const std::vector<float>& x, int64_t axis, bool coerce_2d) {
  const std::vector<int64_t> dims = {2, 3, 4};
  std::vector<double> y(x.size());
  auto softmax_rows = [&](int64_t rows, int64_t cols, int64_t inner) {  // rows x cols x inner, softmax over cols
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t k = 0; k < inner; ++k) {
        double mx = -INFINITY, sum = 0;
        for (int64_t c = 0; c < cols; ++c) mx = std::max<double>(mx, x[(r * cols + c) * inner + k]);
        for (int64_t c = 0; c < cols; ++c) sum += std::exp(x[(r * cols + c) * inner + k] - mx);
        for (int64_t c = 0; c < cols; ++c) y[(r * cols + c) * inner + k] = std::exp(x[(r * cols + c) * inner + k] - mx) / sum;
      }
    }
  };
  const int64_t a = axis < 0 ? axis + 3 : axis;
  int64_t outer = 1, mid = 1, inner = 1;
  for (int64_t d = 0; d < 3; ++d) (d < a ? outer : d == a ? mid : inner) *= dims[d];
  if (coerce_2d) {
    softmax_rows(outer, mid * inner, 1);
  } else {
    softmax_rows(outer, mid, inner);
  }
  return y;
}

std::vector<float> RunOnX(const v1::Graph& graph, const std::vector<float>& x) {
  HostTensor in = HostTensor::Allocate({v1::FLOAT32, {2, 3, 4}});
  std::copy(x.begin(), x.end(), in.mutable_as<float>());
  auto plan = PreparePlan(std::make_shared<const v1::Graph>(graph), nullptr, testing::DeviceFor().preset(), {});
  EXPECT_TRUE(plan.ok()) << plan.status();
  if (!plan.ok()) return {};
  auto result = testing::Execute(*plan, {in});
  EXPECT_TRUE(result.ok()) << result.status();
  if (!result.ok()) return {};
  const float* y = result->outputs[0].as<float>();
  return std::vector<float>(y, y + x.size());
}

// torch's export keeps a Python float as a DOUBLE constant (math.log(100.0)
// in swin_v2's attention) and may cast to DOUBLE: both run as FLOAT, each
// double rounded to its nearest float (beyond fp32's range: inf).
TEST(OnnxOpsetsTest, DoubleConstantsAndCastsToDoubleRunAsFloat) {
  ::onnx::ModelProto m;
  m.set_ir_version(7);
  SetOpset(m, 17);
  auto* g = m.mutable_graph();
  AddInput(g, "x", {2, 3, 4});
  auto* d = g->add_initializer();  // typed values
  d->set_name("d");
  d->set_data_type(::onnx::TensorProto::DOUBLE);
  d->add_dims(4);
  const std::vector<double> dv = {1.0 / 3.0, -2.5, 1e40, 0.1};
  for (double v : dv) d->add_double_data(v);
  auto* c = AddNode(g, "Constant", {}, {"c"}, "c");  // raw data
  auto* value = c->add_attribute();
  value->set_name("value");
  value->set_type(::onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(::onnx::TensorProto::DOUBLE);
  const double cv = std::log(100.0);
  value->mutable_t()->set_raw_data(&cv, sizeof cv);
  IntAttr(AddNode(g, "Cast", {"x"}, {"xd"}, "to_double"), "to", ::onnx::TensorProto::DOUBLE);
  AddNode(g, "Add", {"xd", "d"}, {"s"}, "add");
  AddNode(g, "Mul", {"s", "c"}, {"y"}, "mul");
  g->add_output()->set_name("y");
  auto imported = onnxio::ImportOnnxModel(m);
  ASSERT_TRUE(imported.ok()) << imported.status();
  std::vector<float> x(24);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) / 8.0f - 1.0f;
  const std::vector<float> y = RunOnX(imported->graph, x);
  ASSERT_EQ(y.size(), x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const float want = (x[i] + static_cast<float>(dv[i % 4])) * static_cast<float>(cv);  // fp32, as the ops run
    if (std::isinf(want)) {
      EXPECT_TRUE(std::isinf(y[i]) && y[i] > 0) << i;
    } else {
      EXPECT_FLOAT_EQ(y[i], want) << i;
    }
  }
}

// An empty DOUBLE initializer, raw or typed, imports as an empty FLOAT one
// (the raw form copied 0 bytes to a vector's null buffer: undefined, found by
// UBSan in the onnx fuzzer; tests/fuzz/regressions/onnx replays it there).
TEST(OnnxOpsetsTest, AnEmptyDoubleInitializerImportsAsAnEmptyFloatOne) {
  for (const bool raw : {true, false}) {
    SCOPED_TRACE(raw ? "raw_data" : "double_data");
    ::onnx::ModelProto m;
    m.set_ir_version(7);
    SetOpset(m, 17);
    auto* g = m.mutable_graph();
    auto* d = g->add_initializer();
    d->set_name("d");
    d->set_data_type(::onnx::TensorProto::DOUBLE);
    for (int64_t dim : {7, 0, 3}) d->add_dims(dim);
    if (raw) d->set_raw_data("");
    AddNode(g, "Identity", {"d"}, {"y"}, "id");
    g->add_output()->set_name("y");
    auto imported = onnxio::ImportOnnxModel(m);
    ASSERT_TRUE(imported.ok()) << imported.status();
    ASSERT_EQ(imported->graph.initializers_size(), 1);
    const v1::Tensor& t = imported->graph.initializers(0).tensor();
    EXPECT_EQ(t.dtype(), v1::FLOAT32);
    EXPECT_THAT(t.shape(), ::testing::ElementsAre(7, 0, 3));
    EXPECT_TRUE(t.data().empty());
  }
}

TEST(OnnxOpsetsTest, SoftmaxBeforeOpset13CoercesItsInputTo2D) {
  std::vector<float> x(24);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i) * 0.7f) * 3;
  struct Case {
    int opset;
    int64_t axis;  // -9: no attribute
    int64_t effective;
    bool coerce;
  };
  for (const Case& c : {Case{11, -9, 1, true}, Case{11, 0, 0, true}, Case{12, 1, 1, true}, Case{11, -1, -1, true},
                        Case{11, 2, 2, true}, Case{13, 1, 1, false}, Case{13, -9, -1, false}}) {
    ::onnx::ModelProto m = OneOp("Softmax", c.opset);
    if (c.axis != -9) IntAttr(m.mutable_graph()->mutable_node(0), "axis", c.axis);
    auto imported = onnxio::ImportOnnxModel(m);
    ASSERT_TRUE(imported.ok()) << imported.status();
    const std::vector<float> got = RunOnX(imported->graph, x);
    const std::vector<double> want = SoftmaxReference(x, c.effective, c.coerce);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_NEAR(got[i], want[i], 1e-6) << "opset " << c.opset << " axis " << c.axis << " element " << i;
    }
  }
  // The coerced and the per-axis answers differ here: the test could tell them apart.
  EXPECT_GT(std::fabs(SoftmaxReference(x, 1, true)[0] - SoftmaxReference(x, 1, false)[0]), 1e-3);
}

TEST(OnnxOpsetsTest, LogSoftmaxAndHardmaxBeforeOpset13AreRewrittenToo) {
  for (const char* op : {"LogSoftmax", "Hardmax"}) {
    auto imported = onnxio::ImportOnnxModel(OneOp(op, 11));
    ASSERT_TRUE(imported.ok()) << imported.status();
    std::vector<std::string> ops;
    for (const auto& n : imported->graph.nodes()) ops.push_back(n.op_type());
    EXPECT_THAT(ops, ::testing::ElementsAre("Shape", "Flatten", op, "Reshape")) << op;
    EXPECT_EQ(imported->graph.nodes(2).name(), "n");  // errors and profiles still name the model's node
  }
}

TEST(OnnxOpsetsTest, FormsOfAnotherOpsetAreRefusedNamingOpAndOpsets) {
  {
    ::onnx::ModelProto m = OneOp("ReduceMean", 18);
    IntsAttr(m.mutable_graph()->mutable_node(0), "axes", {1});
    EXPECT_THAT(ImportError(m), HasSubstr("ReduceMean attribute \"axes\" is the form of opsets before 18; at opset "
                                          "18 axes is input 1 (1 node: \"n\")"));
  }
  {
    ::onnx::ModelProto m = OneOp("ReduceMean", 13);
    AddInt64Initializer(m.mutable_graph(), "axes", {1});
    m.mutable_graph()->mutable_node(0)->add_input("axes");
    EXPECT_THAT(ImportError(m), HasSubstr("ReduceMean input 1 (axes) is in ONNX from opset 18; at opset 13 axes is "
                                          "the attribute \"axes\""));
    m.mutable_opset_import(0)->set_version(18);
    EXPECT_TRUE(onnxio::ImportOnnxModel(m).ok());
  }
  {
    ::onnx::ModelProto m = OneOp("Squeeze", 13, {2, 1, 4});
    IntsAttr(m.mutable_graph()->mutable_node(0), "axes", {1});
    EXPECT_THAT(ImportError(m), HasSubstr("Squeeze attribute \"axes\" is the form of opsets before 13"));
    m.mutable_opset_import(0)->set_version(12);
    EXPECT_TRUE(onnxio::ImportOnnxModel(m).ok());
  }
  {
    ::onnx::ModelProto m = OneOp("Split", 17);
    IntAttr(m.mutable_graph()->mutable_node(0), "num_outputs", 2);
    EXPECT_THAT(ImportError(m), HasSubstr("Split attribute \"num_outputs\" is in ONNX from opset 18; the model "
                                          "imports opset 17"));
  }
  EXPECT_THAT(ImportError(OneOp("Gelu", 17)), HasSubstr("op type \"Gelu\" is in ONNX from opset 20; the model "
                                                          "imports opset 17"));
  EXPECT_TRUE(onnxio::ImportOnnxModel(OneOp("Gelu", 20)).ok());
  {
    ::onnx::ModelProto m = OneOp("Resize", 10);
    EXPECT_THAT(ImportError(m), HasSubstr("Resize before opset 11 is not served"));
  }
  // Every problem at once, with the unsupported ones.
  ::onnx::ModelProto m = OneOp("Gelu", 13);
  AddNode(m.mutable_graph(), "Upsample", {"y"}, {"z"}, "up");
  EXPECT_THAT(ImportError(m), HasSubstr("model has 2 unsupported elements"));
}

TEST(OnnxOpsetsTest, DropoutBeforeOpset12LosesItsRatio) {
  ::onnx::ModelProto m = OneOp("Dropout", 11);
  auto* a = m.mutable_graph()->mutable_node(0)->add_attribute();
  a->set_name("ratio");
  a->set_type(::onnx::AttributeProto::FLOAT);
  a->set_f(0.5f);
  auto imported = onnxio::ImportOnnxModel(m);
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_TRUE(imported->graph.nodes(0).attributes().empty());
  std::vector<float> x(24, 2.5f);
  EXPECT_EQ(RunOnX(imported->graph, x), x);
}

TEST(OnnxOpsetsTest, ExportPicksAnOpsetThatTakesEveryNode) {
  auto exported_opset = [](const std::vector<std::pair<std::string, std::string>>& nodes) -> absl::StatusOr<int> {
    v1::Graph g;
    auto* in = g.add_inputs();
    in->set_name("v0");
    in->set_dtype(v1::FLOAT32);
    in->add_shape(2);
    in->add_shape(4);
    for (size_t i = 0; i < nodes.size(); ++i) {
      v1::Node* n = g.add_nodes();
      n->set_name("n" + std::to_string(i));
      n->set_op_type(nodes[i].first);
      n->add_inputs("v" + std::to_string(i));
      n->add_outputs("v" + std::to_string(i + 1));
      if (!nodes[i].second.empty()) (*n->mutable_attributes())[nodes[i].second].mutable_ints()->add_values(1);
    }
    g.add_outputs("v" + std::to_string(nodes.size()));
    v1::ValueInfo out;
    out.set_dtype(v1::FLOAT32);
    auto bytes = onnxio::ExportOnnx(g, {out});
    if (!bytes.ok()) return bytes.status();
    ::onnx::ModelProto m;
    m.ParseFromString(*bytes);
    auto back = onnxio::ImportOnnxModel(m);
    if (!back.ok()) return back.status();
    return static_cast<int>(m.opset_import(0).version());
  };
  EXPECT_EQ(exported_opset({{"Relu", ""}}).value(), 17);
  EXPECT_EQ(exported_opset({{"Relu", ""}, {"Gelu", ""}}).value(), 20);
  EXPECT_EQ(exported_opset({{"ReduceMean", "axes"}}).value(), 17);
  auto none = exported_opset({{"ReduceMean", "axes"}, {"Gelu", ""}});
  EXPECT_EQ(none.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(none.status().message(), HasSubstr("no ONNX opset takes every node"));
}

TEST(OnnxOpsetsTest, DocsTableIsTheCodes) {
  auto section = npu::testing::DocSection(std::string(NPU_SOURCE_DIR) + "/docs/onnx.md", "opsets");
  ASSERT_TRUE(section.has_value()) << "docs/onnx.md has no <!-- BEGIN opsets --> section";
  const std::string table = onnxio::OpsetTableMarkdown();
  if (*section != table) {
    const std::string generated = std::string(NPU_BINARY_DIR) + "/onnx_opsets_table.md";
    std::ofstream(generated) << table;
    ADD_FAILURE() << "docs/onnx.md's opset table differs from onnx/opsets.cc; paste " << generated << " there";
  }
}

}  // namespace
}  // namespace npu::graph
