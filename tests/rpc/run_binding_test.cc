// BindRun: every graph input fed once, inline or by a handle of the caller on
// the run's device, with the declared type; keep_on_device names outputs.
#include "server/rpc/run_binding.h"

#include "client/graph_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/core/core_test_support.h"

namespace npu::rpc {
namespace {

using ::testing::HasSubstr;
using testing::FloatProto;

class RunBindingTest : public ::testing::Test {
 protected:
  RunBindingTest() {
    client::GraphBuilder g("add");
    const client::Value a = g.Input("a", v1::FLOAT32, {2});  // declared in this order
    const client::Value b = g.Input("b", v1::FLOAT32, {2});
    g.Output(g.Add(a, b), "sum");
    plan_ = graph::BuildPlan(std::make_shared<const v1::Graph>(g.Build()), dev_.preset()).value();
  }
  void Inline(const char* name, std::vector<float> v, std::vector<int64_t> shape) {
    v1::RunInput* in = req_.add_inputs();
    in->set_name(name);
    *in->mutable_tensor() = FloatProto(std::move(v), std::move(shape));
  }
  absl::Status Bind() { return BindRun(*plan_, req_, "alice", dev_, store_).status(); }

  device::Device dev_ = testing::MakeDevice(0);
  device::Device other_dev_ = testing::MakeDevice(1);
  core::TensorStore store_;
  std::shared_ptr<const graph::Plan> plan_;
  v1::RunRequest req_;
};

TEST_F(RunBindingTest, InlineAndHandleInputsBindInPlanOrder) {
  auto h = store_.Put("alice", &dev_, testing::FloatTensor({3, 4}));
  ASSERT_TRUE(h.ok());
  v1::RunInput* in = req_.add_inputs();
  in->set_name("b");
  in->set_handle(h->handle());
  Inline("a", {1, 2}, {2});
  req_.mutable_options()->add_keep_on_device("sum");
  auto b = BindRun(*plan_, req_, "alice", dev_, store_);
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_EQ(b->inputs.size(), 2u);
  EXPECT_EQ(b->inputs[0].as<float>()[1], 2.0f);  // "a" first, as the graph declares
  EXPECT_EQ(b->inputs[1].as<float>()[0], 3.0f);
  EXPECT_EQ(b->keep_on_device, std::vector<bool>{true});
}

TEST_F(RunBindingTest, MissingRepeatedOrUnknownInputsAreNamed) {
  Inline("a", {1, 2}, {2});
  EXPECT_THAT(std::string(Bind().message()), HasSubstr("graph input \"b\" (FLOAT32[2]) is not given"));
  Inline("a", {1, 2}, {2});
  EXPECT_THAT(std::string(Bind().message()), HasSubstr("input \"a\" is given more than once"));
  req_.clear_inputs();
  Inline("a", {1, 2}, {2});
  Inline("b", {1, 2}, {2});
  Inline("c", {1, 2}, {2});
  EXPECT_THAT(std::string(Bind().message()), HasSubstr("input \"c\" is not an input of the graph"));
}

TEST_F(RunBindingTest, TypesMustMatchTheGraph) {
  Inline("a", {1, 2, 3}, {3});
  Inline("b", {1, 2}, {2});
  absl::Status s = Bind();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("input \"a\" is FLOAT32[3]; the graph declares FLOAT32[2]"));
  req_.clear_inputs();
  Inline("a", {1, 2}, {3});  // 8 bytes for 3 elements
  Inline("b", {1, 2}, {2});
  EXPECT_THAT(std::string(Bind().message()), HasSubstr("needs 12 bytes of data, got 8"));
}

TEST_F(RunBindingTest, HandlesMustBeTheCallersAndOnTheRunsDevice) {
  auto bobs = store_.Put("bob", &dev_, testing::FloatTensor({1, 2}));
  auto elsewhere = store_.Put("alice", &other_dev_, testing::FloatTensor({1, 2}));
  ASSERT_TRUE(bobs.ok() && elsewhere.ok());
  Inline("a", {1, 2}, {2});
  v1::RunInput* in = req_.add_inputs();
  in->set_name("b");
  in->set_handle(bobs->handle());
  EXPECT_EQ(Bind().code(), absl::StatusCode::kNotFound);
  in->set_handle(elsewhere->handle());
  absl::Status s = Bind();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("is on npu:1, the run is on npu:0"));
}

TEST_F(RunBindingTest, KeepOnDeviceMustNameAnOutput) {
  Inline("a", {1, 2}, {2});
  Inline("b", {1, 2}, {2});
  req_.mutable_options()->add_keep_on_device("a");
  EXPECT_THAT(std::string(Bind().message()), HasSubstr("keep_on_device names \"a\", which is not an output"));
}

}  // namespace
}  // namespace npu::rpc
