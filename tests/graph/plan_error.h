// What the planner says about a one-node graph that it must refuse: expects
// INVALID_ARGUMENT naming node "n" and returns the message ("" when it plans).
#pragma once

#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/graph/plan.h"
#include "tests/graph/one_node.h"
#include "tests/graph/plan_runner.h"

namespace npu::graph::testing {

inline std::string PlanError(OneNode n) {
  auto plan = BuildPlan(std::make_shared<const v1::Graph>(n.graph()), DeviceFor().preset(),
                        PlanLimits{.max_tensor_bytes = uint64_t{1} << 30});
  EXPECT_FALSE(plan.ok());
  if (plan.ok()) return "";
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument) << plan.status();
  EXPECT_THAT(std::string(plan.status().message()), ::testing::HasSubstr("node \"n\""));
  return std::string(plan.status().message());
}

}  // namespace npu::graph::testing
