// Graph-layer tests run graphs the way the server does, without a server:
// BuildPlan, then the runner (RunPlan) on a simulated device.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/device/device.h"
#include "server/graph/runner.h"
#include "server/graph/plan.h"

namespace npu::graph::testing {

// One device per preset, made on first use and kept for the test binary.
inline device::Device& DeviceFor(const std::string& preset = "ascend910b") {
  static auto* devices = new std::map<std::string, std::unique_ptr<device::Device>>();
  auto& d = (*devices)[preset];
  if (!d) d = std::make_unique<device::Device>(0, device::PresetByName(preset).value(), device::DeviceOptions{});
  return *d;
}

// Runs `plan` with `inputs` (Plan::inputs order) on DeviceFor(preset).
inline absl::StatusOr<ExecResult> Execute(std::shared_ptr<const Plan> plan, std::vector<HostTensor> inputs,
                                          const std::string& preset = "ascend910b") {
  return RunPlan(std::move(plan), std::move(inputs), ExecOptions{}, DeviceFor(preset));
}

// Plans `graph` for `preset` and runs it.
inline absl::StatusOr<ExecResult> PlanAndRun(const v1::Graph& graph, std::vector<HostTensor> inputs,
                                             const std::string& preset = "ascend910b") {
  auto plan = BuildPlan(std::make_shared<const v1::Graph>(graph), DeviceFor(preset).preset());
  if (!plan.ok()) return plan.status();
  return Execute(*std::move(plan), std::move(inputs), preset);
}

}  // namespace npu::graph::testing
