// Binding, written once for every frontend: every declared input fed once,
// inline or by a handle of the caller on the run's device, with the declared
// type (-1 dims take any size); outputs selected by name; keep_on_device names
// outputs. Errors name the input or output in the caller's datatype words.
#include "server/core/input_binding.h"

#include "client/graph_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/core/core_test_support.h"

namespace npu::core {
namespace {

using ::testing::HasSubstr;
using testing::FloatTensor;

std::string Fp(v1::DataType dtype) { return dtype == v1::FLOAT32 ? "FP32" : "OTHER"; }

class InputBindingTest : public ::testing::Test {
 protected:
  InputBindingTest() {
    client::GraphBuilder g("add");
    const client::Value a = g.Input("a", v1::FLOAT32, {2});  // declared in this order
    const client::Value b = g.Input("b", v1::FLOAT32, {2});
    g.Output(g.Add(a, b), "sum");
    plan_ = graph::BuildPlan(std::make_shared<const v1::Graph>(g.Build()), dev_.preset()).value();
  }
  void Inline(const char* name, std::vector<float> v) { given_.push_back({name, FloatTensor(std::move(v)), ""}); }
  absl::StatusOr<std::vector<graph::HostTensor>> BindAll() {
    return BindInputs(DeclaredInputs(*plan_), given_, subject_, "alice", dev_, store_);
  }
  absl::Status Bind() { return BindAll().status(); }

  device::Device dev_ = testing::MakeDevice(0);
  device::Device other_dev_ = testing::MakeDevice(1);
  TensorStore store_;
  std::shared_ptr<const graph::Plan> plan_;
  std::vector<RequestInput> given_;
  BindSubject subject_{"the graph"};
};

TEST_F(InputBindingTest, InlineAndHandleInputsBindInDeclaredOrder) {
  auto h = store_.Put("alice", &dev_, FloatTensor({3, 4}));
  ASSERT_TRUE(h.ok());
  given_.push_back({"b", {}, h->handle()});
  Inline("a", {1, 2});
  auto b = BindAll();
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_EQ(b->size(), 2u);
  EXPECT_EQ((*b)[0].as<float>()[1], 2.0f);  // "a" first, as the graph declares
  EXPECT_EQ((*b)[1].as<float>()[0], 3.0f);
  EXPECT_TRUE(CheckPlanInputs(*plan_, *b, subject_).ok());
}

TEST_F(InputBindingTest, MissingRepeatedOrUnknownInputsAreNamed) {
  Inline("a", {1, 2});
  EXPECT_THAT(std::string(Bind().message()), HasSubstr("input \"b\" of the graph is missing; it takes FLOAT32[2]"));
  Inline("a", {1, 2});
  EXPECT_THAT(std::string(Bind().message()), HasSubstr("input \"a\" is given twice"));
  given_.clear();
  Inline("a", {1, 2});
  Inline("b", {1, 2});
  Inline("c", {1, 2});
  EXPECT_THAT(std::string(Bind().message()), HasSubstr("the graph has no input \"c\" (inputs: a, b)"));
}

TEST_F(InputBindingTest, TypesMustFitTheDeclarationInTheCallersWords) {
  Inline("a", {1, 2, 3});
  Inline("b", {1, 2});
  absl::Status s = Bind();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("input \"a\" is FLOAT32[3]; the graph takes FLOAT32[2]"));
  subject_ = {"model \"add\"", Fp};
  given_.clear();
  Inline("a", {1, 2, 3});
  Inline("b", {1, 2});
  EXPECT_THAT(std::string(Bind().message()), HasSubstr("input \"a\" is FP32[3]; model \"add\" takes FP32[2]"));
}

TEST_F(InputBindingTest, DynamicDimsTakeAnySize) {
  v1::ValueInfo x;
  x.set_name("x");
  x.set_dtype(v1::FLOAT32);
  x.add_shape(-1);
  Inline("x", {1, 2, 3});
  auto b = BindInputs({x}, given_, subject_, "alice", dev_, store_);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ((*b)[0].type().shape, graph::Shape{3});
  given_.clear();
  EXPECT_THAT(std::string(BindInputs({x}, given_, subject_, "alice", dev_, store_).status().message()),
              HasSubstr("input \"x\" of the graph is missing; it takes FLOAT32[-1]"));
}

TEST_F(InputBindingTest, HandlesMustBeTheCallersAndOnTheRunsDevice) {
  auto bobs = store_.Put("bob", &dev_, FloatTensor({1, 2}));
  auto elsewhere = store_.Put("alice", &other_dev_, FloatTensor({1, 2}));
  ASSERT_TRUE(bobs.ok() && elsewhere.ok());
  Inline("a", {1, 2});
  given_.push_back({"b", {}, bobs->handle()});
  EXPECT_EQ(Bind().code(), absl::StatusCode::kNotFound);
  given_.clear();  // binding moved the inline tensors out
  Inline("a", {1, 2});
  given_.push_back({"b", {}, elsewhere->handle()});
  absl::Status s = Bind();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("is on npu:1, the run is on npu:0"));
}

TEST_F(InputBindingTest, OutputsAreSelectedByNameAndKeepOnDeviceMustNameOne) {
  auto all = SelectOutputs(*plan_, {}, {"sum"}, false, subject_);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->outputs, std::vector<size_t>{0});
  EXPECT_EQ(all->keep_on_device, std::vector<bool>{true});
  EXPECT_THAT(std::string(SelectOutputs(*plan_, {}, {"a"}, false, subject_).status().message()),
              HasSubstr("keep_on_device names \"a\", which is not an output of the graph"));
  EXPECT_THAT(std::string(SelectOutputs(*plan_, {{"q"}}, {}, false, subject_).status().message()),
              HasSubstr("the graph has no output \"q\" (outputs: sum)"));
  EXPECT_THAT(std::string(SelectOutputs(*plan_, {{"sum"}, {"sum"}}, {}, false, subject_).status().message()),
              HasSubstr("output \"sum\" is requested twice"));
}

}  // namespace
}  // namespace npu::core
