// GraphStore and RegisteredGraph: ids per tenant, one plan per device preset.
#include "server/rpc/graph_store.h"

#include "client/graph_builder.h"
#include "gtest/gtest.h"

namespace npu::rpc {
namespace {

std::shared_ptr<const graph::Plan> ReluPlan(const char* preset) {
  client::GraphBuilder g("relu");
  g.Output(g.Relu(g.Input("x", v1::FLOAT16, {4, 4})), "y");
  return graph::BuildPlan(std::make_shared<const v1::Graph>(g.Build()), device::PresetByName(preset).value())
      .value();
}

TEST(GraphStoreTest, IdsArePerTenant) {
  GraphStore store;
  const std::string id = store.Add("alice", ReluPlan("ascend910"));
  EXPECT_TRUE(store.Get("alice", id).ok());
  EXPECT_EQ(store.Get("bob", id).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store.Remove("bob", id).code(), absl::StatusCode::kNotFound);
  EXPECT_NE(store.Add("alice", ReluPlan("ascend910")), id);
  EXPECT_TRUE(store.Remove("alice", id).ok());
  EXPECT_EQ(store.Get("alice", id).status().code(), absl::StatusCode::kNotFound);
}

TEST(GraphStoreTest, APlanIsBuiltOncePerPresetAndKept) {
  GraphStore store;
  auto first = ReluPlan("ascend910");
  auto entry = store.Get("t", store.Add("t", first)).value();
  auto same = entry->PlanFor(device::PresetByName("ascend910").value(), {});
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->get(), first.get());  // registration's plan, not a new one
  auto other = entry->PlanFor(device::PresetByName("ascend310").value(), {});
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_NE(other->get(), first.get());
  EXPECT_EQ((*other)->preset.name, "ascend310");
  EXPECT_EQ((*other)->graph.get(), first->graph.get());  // the one copy of the graph
  auto again = entry->PlanFor(device::PresetByName("ascend310").value(), {});
  EXPECT_EQ(again->get(), other->get());
}

}  // namespace
}  // namespace npu::rpc
