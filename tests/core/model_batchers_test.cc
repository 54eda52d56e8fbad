// A model's dynamic batching policy from its config (Triton's instance_group
// placement: `count` instances on each listed device, one per device by
// default).
#include "server/core/model_batchers.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace npu::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(BatchPolicyTest, InstanceGroupsPlaceCountInstancesOnEachDevice) {
  inference::ModelConfig c;
  c.set_max_batch_size(8);
  c.mutable_dynamic_batching()->add_preferred_batch_size(8);
  c.mutable_dynamic_batching()->add_preferred_batch_size(2);
  auto p = BatchPolicyOf(c, 2);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_THAT(p->instance_devices, ElementsAre(0, 1));  // Triton's default: one per device
  EXPECT_THAT(p->preferred_batch_sizes, ElementsAre(2, 8));
  auto* g = c.add_instance_group();
  g->set_count(2);
  g->add_gpus(1);
  p = BatchPolicyOf(c, 2);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_THAT(p->instance_devices, ElementsAre(1, 1));
  g->add_gpus(5);
  p = BatchPolicyOf(c, 2);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(p.status().message(), HasSubstr("npu:5"));
}

}  // namespace
}  // namespace npu::core
