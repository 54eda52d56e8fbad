// GraphStore and RegisteredGraph: ids per tenant, one id per content hash,
// one plan per device preset, and for a graph with dynamic dims one plan per
// bound input signature, at most max_plans kept.
#include "server/core/graph_store.h"

#include "client/graph_builder.h"
#include "gtest/gtest.h"

namespace npu::core {
namespace {

const device::DevicePreset& Preset(const char* name) {
  static auto* presets = new std::map<std::string, device::DevicePreset>();
  auto it = presets->find(name);
  if (it == presets->end()) it = presets->emplace(name, device::PresetByName(name).value()).first;
  return it->second;
}

std::shared_ptr<RegisteredGraph> Relu(std::vector<int64_t> shape, size_t max_plans = 8) {
  client::GraphBuilder g("relu");
  g.Output(g.Relu(g.Input("x", v1::FLOAT16, shape)), "y");
  return RegisteredGraph::Create(std::make_shared<const v1::Graph>(g.Build()), {}, Preset("ascend910"), {}, max_plans)
      .value();
}

graph::TensorType Half(std::vector<int64_t> shape) { return {v1::FLOAT16, shape}; }

TEST(GraphStoreTest, IdsArePerTenant) {
  GraphStore store;
  const std::string id = store.Add("alice", Relu({4, 4}));
  EXPECT_TRUE(store.Get("alice", id).ok());
  EXPECT_EQ(store.Get("bob", id).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store.Remove("bob", id).code(), absl::StatusCode::kNotFound);
  EXPECT_NE(store.Add("alice", Relu({4, 4})), id);
  EXPECT_TRUE(store.Remove("alice", id).ok());
  EXPECT_EQ(store.Get("alice", id).status().code(), absl::StatusCode::kNotFound);
}

TEST(GraphStoreTest, TheSameContentGetsTheSameIdPerTenant) {
  GraphStore store;
  const std::string id = store.Add("alice", Relu({4, 4}), "abc");
  EXPECT_EQ(store.Add("alice", Relu({4, 4}), "abc"), id);
  EXPECT_NE(store.Add("bob", Relu({4, 4}), "abc"), id);  // another tenant never sees alice's
  EXPECT_EQ(store.Reregister("alice", "abc")->first, id);
  EXPECT_EQ(store.Reregister("carol", "abc").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store.registrations("alice", id), 3);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(store.Remove("alice", id).ok());
  EXPECT_EQ(store.Reregister("alice", "abc").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store.Remove("alice", id).code(), absl::StatusCode::kNotFound);
}

// Two callers of one tenant register the same model (DDP ranks, two processes
// of a job): one's unregister leaves the graph to the other (issue 28).
TEST(GraphStoreTest, UnregisteringReleasesOneRegistrationOfSharedContent) {
  GraphStore store;
  const std::string id = store.Add("alice", Relu({4, 4}), "abc");
  ASSERT_EQ(store.Add("alice", Relu({4, 4}), "abc"), id);
  ASSERT_TRUE(store.Remove("alice", id).ok());
  EXPECT_TRUE(store.Get("alice", id).ok()) << "the other registration still runs it";
  EXPECT_EQ(store.registrations("alice", id), 1);
  ASSERT_TRUE(store.Remove("alice", id).ok());
  EXPECT_EQ(store.Get("alice", id).status().code(), absl::StatusCode::kNotFound);
}

TEST(GraphStoreTest, APlanIsBuiltOncePerPresetAndKept) {
  auto entry = Relu({4, 4});
  EXPECT_FALSE(entry->dynamic());
  auto first = entry->PlanFor(Preset("ascend910"), {Half({4, 4})}, {});
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(entry->plans_cached(), 1u);  // registration's plan, not a new one
  auto other = entry->PlanFor(Preset("ascend310"), {Half({4, 4})}, {});
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_NE(other->get(), first->get());
  EXPECT_EQ((*other)->preset.name, "ascend310");
  EXPECT_EQ((*other)->weights.get(), (*first)->weights.get());  // the one copy of the model
  EXPECT_EQ(entry->PlanFor(Preset("ascend310"), {Half({4, 4})}, {})->get(), other->get());
}

TEST(GraphStoreTest, ADynamicGraphIsPlannedPerBoundSignatureWithABound) {
  auto entry = Relu({-1, 4}, /*max_plans=*/2);
  ASSERT_TRUE(entry->dynamic());
  EXPECT_EQ(entry->plans_cached(), 0u);
  EXPECT_EQ(entry->inputs()[0].shape(0), -1);
  auto b1 = entry->PlanFor(Preset("ascend910"), {Half({1, 4})}, {});
  ASSERT_TRUE(b1.ok()) << b1.status();
  EXPECT_EQ((*b1)->values[(*b1)->outputs[0]].type.shape, (graph::Shape{1, 4}));
  auto b3 = entry->PlanFor(Preset("ascend910"), {Half({3, 4})}, {});
  ASSERT_TRUE(b3.ok());
  EXPECT_EQ((*b3)->values[(*b3)->outputs[0]].type.shape, (graph::Shape{3, 4}));
  EXPECT_EQ(entry->PlanFor(Preset("ascend910"), {Half({1, 4})}, {})->get(), b1->get());  // cached; 3 is older now
  auto b5 = entry->PlanFor(Preset("ascend910"), {Half({5, 4})}, {});
  ASSERT_TRUE(b5.ok());
  EXPECT_EQ(entry->plans_cached(), 2u);  // the bound: 3 went
  EXPECT_EQ(entry->PlanFor(Preset("ascend910"), {Half({1, 4})}, {})->get(), b1->get());
  EXPECT_NE(entry->PlanFor(Preset("ascend910"), {Half({3, 4})}, {})->get(), b3->get());  // planned again
  auto bad = entry->PlanFor(Preset("ascend910"), {Half({2, 5})}, {});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("FLOAT16[?,4]"), std::string::npos) << bad.status();
}

}  // namespace
}  // namespace npu::core
