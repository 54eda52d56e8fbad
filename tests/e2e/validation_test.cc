// Malformed graphs and run requests over real gRPC: each gets its status code
// with the culprit named, and the server keeps answering after every one.
#include <functional>

#include <gtest/gtest.h>

#include "client/client.h"
#include "client/host_tensor.h"
#include "tests/e2e/e2e_support.h"
#include "tests/e2e/server_process.h"

namespace npu {
namespace {

using testing::AddNode;

v1::Tensor Zeros(v1::DataType dtype, std::vector<int64_t> shape) {
  v1::Tensor t;
  t.set_dtype(dtype);
  int64_t n = 1;
  for (int64_t d : shape) {
    t.add_shape(d);
    n *= d;
  }
  t.set_data(std::string(n * client::DataTypeSize(dtype), '\0'));
  return t;
}

v1::ValueInfo* AddInput(v1::Graph& g, const std::string& name, v1::DataType dtype, std::vector<int64_t> shape) {
  v1::ValueInfo* in = g.add_inputs();
  in->set_name(name);
  in->set_dtype(dtype);
  for (int64_t d : shape) in->add_shape(d);
  return in;
}

// y = relu(x @ w + b), x fp16 [2,8], w [8,4] initializer, b [4] input.
v1::RunRequest ValidRequest() {
  v1::RunRequest req;
  v1::Graph& g = *req.mutable_graph();
  g.set_name("base");
  AddInput(g, "x", v1::FLOAT16, {2, 8});
  AddInput(g, "b", v1::FLOAT16, {4});
  auto* w = g.add_initializers();
  w->set_name("w");
  *w->mutable_tensor() = Zeros(v1::FLOAT16, {8, 4});
  AddNode(g, "fc", "MatMul", {"x", "w"}, {"h"});
  AddNode(g, "bias", "Add", {"h", "b"}, {"hb"});
  AddNode(g, "act", "Relu", {"hb"}, {"y"});
  g.add_outputs("y");
  auto* x = req.add_inputs();
  x->set_name("x");
  *x->mutable_tensor() = Zeros(v1::FLOAT16, {2, 8});
  auto* b = req.add_inputs();
  b->set_name("b");
  *b->mutable_tensor() = Zeros(v1::FLOAT16, {4});
  return req;
}

struct BadCase {
  std::string name;
  std::function<void(v1::RunRequest&)> mutate;
  absl::StatusCode code;
  std::vector<std::string> culprits;  // substrings the message must contain
};

// Test names in ctest show the case's name instead of its bytes.
void PrintTo(const BadCase& c, std::ostream* os) { *os << c.name; }

std::vector<BadCase> Cases() {
  using C = absl::StatusCode;
  return {
      {"unknown_op", [](auto& r) { r.mutable_graph()->mutable_nodes(2)->set_op_type("Frobnicate"); },
       C::kInvalidArgument, {"act", "Frobnicate"}},
      {"duplicate_node_name", [](auto& r) { r.mutable_graph()->mutable_nodes(1)->set_name("fc"); },
       C::kInvalidArgument, {"\"fc\"", "more than once"}},
      {"duplicate_value_name", [](auto& r) { r.mutable_graph()->mutable_nodes(1)->set_outputs(0, "h"); },
       C::kInvalidArgument, {"\"h\"", "more than once"}},
      {"input_shadows_initializer", [](auto& r) { AddInput(*r.mutable_graph(), "w", v1::FLOAT16, {8, 4}); },
       C::kInvalidArgument, {"\"w\""}},
      {"undefined_input", [](auto& r) { r.mutable_graph()->mutable_nodes(1)->set_inputs(1, "bb"); },
       C::kInvalidArgument, {"bias", "\"bb\"", "not defined"}},
      {"cycle",
       [](auto& r) {
         r.mutable_graph()->mutable_nodes(0)->set_inputs(0, "y");  // fc reads act's output
       },
       C::kInvalidArgument, {"cycle", "\"fc\""}},
      {"self_loop", [](auto& r) { r.mutable_graph()->mutable_nodes(2)->set_inputs(0, "y"); }, C::kInvalidArgument,
       {"act", "self-loop"}},
      {"matmul_inner_dims",
       [](auto& r) {
         auto* w = r.mutable_graph()->mutable_initializers(0)->mutable_tensor();
         *w = Zeros(v1::FLOAT16, {7, 4});
       },
       C::kInvalidArgument, {"fc", "inner dimensions", "8", "7"}},
      {"add_not_broadcastable",
       [](auto& r) {
         r.mutable_graph()->mutable_inputs(1)->set_shape(0, 3);
         *r.mutable_inputs(1)->mutable_tensor() = Zeros(v1::FLOAT16, {3});
       },
       C::kInvalidArgument, {"bias", "do not broadcast"}},
      {"add_dtype_mismatch",
       [](auto& r) {
         r.mutable_graph()->mutable_inputs(1)->set_dtype(v1::FLOAT32);
         *r.mutable_inputs(1)->mutable_tensor() = Zeros(v1::FLOAT32, {4});
       },
       C::kInvalidArgument, {"bias", "different dtypes", "\"b\""}},
      {"relu_on_int",
       [](auto& r) {
         auto* g = r.mutable_graph();
         AddInput(*g, "k", v1::INT32, {3});
         AddNode(*g, "bad_relu", "Relu", {"k"}, {"kr"});
         g->add_outputs("kr");
         auto* k = r.add_inputs();
         k->set_name("k");
         *k->mutable_tensor() = Zeros(v1::INT32, {3});
       },
       C::kInvalidArgument, {"bad_relu", "INT32"}},
      {"relu_two_inputs", [](auto& r) { r.mutable_graph()->mutable_nodes(2)->add_inputs("hb"); },
       C::kInvalidArgument, {"act", "inputs"}},
      {"unknown_attribute",
       [](auto& r) { (*r.mutable_graph()->mutable_nodes(2)->mutable_attributes())["alpha"].set_f(0.1f); },
       C::kInvalidArgument, {"act", "alpha"}},
      {"cast_without_to",
       [](auto& r) {
         auto* g = r.mutable_graph();
         AddNode(*g, "to_f32", "Cast", {"y"}, {"y32"});
         g->add_outputs("y32");
       },
       C::kInvalidArgument, {"to_f32", "\"to\""}},
      {"cast_to_wrong_type",
       [](auto& r) {
         auto* g = r.mutable_graph();
         auto* n = AddNode(*g, "to_x", "Cast", {"y"}, {"y32"});
         (*n->mutable_attributes())["to"].set_s("float");
         g->add_outputs("y32");
       },
       C::kInvalidArgument, {"to_x", "\"to\"", "integer"}},
      {"cast_to_unknown_code",
       [](auto& r) {
         auto* g = r.mutable_graph();
         auto* n = AddNode(*g, "to_q", "Cast", {"y"}, {"y32"});
         (*n->mutable_attributes())["to"].set_i(99);
         g->add_outputs("y32");
       },
       C::kInvalidArgument, {"to_q", "99"}},
      {"initializer_bytes_short",
       [](auto& r) {
         auto* t = r.mutable_graph()->mutable_initializers(0)->mutable_tensor();
         t->mutable_data()->resize(t->data().size() - 1);
       },
       C::kInvalidArgument, {"\"w\"", "63"}},
      {"negative_dim", [](auto& r) { r.mutable_graph()->mutable_inputs(0)->set_shape(0, -2); },
       C::kInvalidArgument, {"\"x\"", "negative"}},
      {"element_count_overflow",
       [](auto& r) {
         auto* in = r.mutable_graph()->mutable_inputs(0);
         in->set_shape(0, int64_t{1} << 40);
         in->set_shape(1, int64_t{1} << 40);
       },
       C::kInvalidArgument, {"\"x\"", "elements"}},
      {"unspecified_dtype", [](auto& r) { r.mutable_graph()->mutable_inputs(0)->set_dtype(v1::DATA_TYPE_UNSPECIFIED); },
       C::kInvalidArgument, {"\"x\"", "dtype"}},
      {"output_not_defined", [](auto& r) { r.mutable_graph()->add_outputs("nope"); }, C::kInvalidArgument,
       {"\"nope\""}},
      {"duplicate_output", [](auto& r) { r.mutable_graph()->add_outputs("y"); }, C::kInvalidArgument,
       {"\"y\"", "more than once"}},
      {"no_outputs", [](auto& r) { r.mutable_graph()->clear_outputs(); }, C::kInvalidArgument, {"no outputs"}},
      {"missing_run_input", [](auto& r) { r.mutable_inputs()->RemoveLast(); }, C::kInvalidArgument,
       {"\"b\"", "is missing"}},
      {"unexpected_run_input",
       [](auto& r) {
         auto* z = r.add_inputs();
         z->set_name("zz");
         *z->mutable_tensor() = Zeros(v1::FLOAT16, {1});
       },
       C::kInvalidArgument, {"\"zz\"", "has no input"}},
      {"run_input_twice", [](auto& r) { *r.add_inputs() = r.inputs(0); }, C::kInvalidArgument,
       {"\"x\"", "given twice"}},
      {"run_input_wrong_dtype", [](auto& r) { *r.mutable_inputs(0)->mutable_tensor() = Zeros(v1::FLOAT32, {2, 8}); },
       C::kInvalidArgument, {"\"x\"", "FLOAT32", "FLOAT16"}},
      {"run_input_wrong_shape", [](auto& r) { *r.mutable_inputs(0)->mutable_tensor() = Zeros(v1::FLOAT16, {8, 2}); },
       C::kInvalidArgument, {"\"x\"", "[8,2]", "[2,8]"}},
      {"run_input_bytes_wrong",
       [](auto& r) { r.mutable_inputs(0)->mutable_tensor()->mutable_data()->append("abc"); }, C::kInvalidArgument,
       {"\"x\"", "bytes"}},
      {"run_input_no_source", [](auto& r) { r.mutable_inputs(0)->clear_tensor(); }, C::kInvalidArgument,
       {"\"x\"", "neither"}},
      {"unknown_handle", [](auto& r) { r.mutable_inputs(0)->set_handle("00000000000000000000000000000000"); },
       C::kNotFound, {"\"x\"", "00000000000000000000000000000000"}},
      {"unknown_graph_id", [](auto& r) { r.set_graph_id("g-nope"); }, C::kNotFound, {"g-nope"}},
      {"no_graph", [](auto& r) { r.clear_graph(); }, C::kInvalidArgument, {"names no graph"}},
      {"unknown_device", [](auto& r) { r.mutable_options()->set_device("npu:7"); }, C::kNotFound, {"npu:7"}},
      {"bad_device_string", [](auto& r) { r.mutable_options()->set_device("gpu0"); }, C::kInvalidArgument,
       {"gpu0"}},
      {"keep_unknown_output", [](auto& r) { r.mutable_options()->add_keep_on_device("h2"); },
       C::kInvalidArgument, {"\"h2\""}},
      {"bool_input_not_0_or_1",
       [](auto& r) {
         auto* g = r.mutable_graph();
         AddInput(*g, "c", v1::BOOL, {4});
         AddNode(*g, "pick", "Where", {"c", "b", "b"}, {"picked"});
         g->add_outputs("picked");
         auto* c = r.add_inputs();
         c->set_name("c");
         *c->mutable_tensor() = Zeros(v1::BOOL, {4});
         (*c->mutable_tensor()->mutable_data())[2] = 7;
       },
       C::kInvalidArgument, {"\"c\"", "element 2", "is 7"}},
      {"bool_initializer_not_0_or_1",
       [](auto& r) {
         auto* g = r.mutable_graph();
         auto* c = g->add_initializers();
         c->set_name("mask");
         *c->mutable_tensor() = Zeros(v1::BOOL, {4});
         (*c->mutable_tensor()->mutable_data())[0] = 2;
         AddNode(*g, "pick", "Where", {"mask", "b", "b"}, {"picked"});
         g->add_outputs("picked");
       },
       C::kInvalidArgument, {"\"mask\"", "element 0", "is 2"}},
  };
}

class ValidationTest : public ::testing::TestWithParam<BadCase> {
 protected:
  static void SetUpTestSuite() {
    server_ = new testing::ServerProcess();
    client_ = std::move(*client::Client::Connect(server_->target())).release();
  }
  static void TearDownTestSuite() {
    delete client_;
    delete server_;
  }
  static testing::ServerProcess* server_;
  static client::Client* client_;
};
testing::ServerProcess* ValidationTest::server_ = nullptr;
client::Client* ValidationTest::client_ = nullptr;

TEST_F(ValidationTest, TheBaseRequestIsValid) {
  auto resp = client_->Run(ValidRequest());
  ASSERT_TRUE(resp.ok()) << resp.status();
}

TEST_P(ValidationTest, BadRequestGetsItsStatusAndTheServerKeepsServing) {
  const BadCase& c = GetParam();
  v1::RunRequest req = ValidRequest();
  c.mutate(req);
  auto resp = client_->Run(req);
  ASSERT_FALSE(resp.ok()) << c.name << " was accepted";
  EXPECT_EQ(resp.status().code(), c.code) << resp.status();
  for (const auto& culprit : c.culprits) {
    EXPECT_NE(resp.status().message().find(culprit), absl::string_view::npos)
        << "message lacks " << culprit << ": " << resp.status().message();
  }
  // Registering the same graph fails the same way when the fault is in the graph.
  // And the server still answers.
  auto health = client_->Health();
  ASSERT_TRUE(health.ok()) << health.status();
  EXPECT_EQ(*health, grpc::health::v1::HealthCheckResponse::SERVING);
  ASSERT_TRUE(client_->Run(ValidRequest()).ok());
}

INSTANTIATE_TEST_SUITE_P(Corpus, ValidationTest, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace npu
