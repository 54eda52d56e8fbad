// The one way into the core for a run. Every frontend (npu.v1's Run, the KServe
// frontend, trainers, the fuzzer, tests) converts its protocol to a plan and
// inputs, calls this, and converts the result back; the runner owns device
// acquisition (queueing and the small-run policy), cancellation and the result.
//
// Life of a run: RunPlanAsync checks the inputs against the plan, submits one
// job to the device (Device::Submit), which runs ExecutePlan while holding the
// device, and calls `done` once. Nothing here polls: a CancelToken fired by the
// frontend (gRPC reporting a cancelled call or a passed deadline) drops a queued run at once and stops a
// running one at its next node or tile.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "server/device/cancel_token.h"
#include "server/device/device.h"
#include "server/graph/executor.h"
#include "server/graph/plan.h"

namespace npu::graph {

// A run whose values touch at most this many bytes takes microseconds: it runs
// on the calling thread when the device is free (DeviceExecutor::Job::small).
inline constexpr uint64_t kSmallRunBytes = 256 << 10;

using RunDone = std::function<void(absl::StatusOr<ExecResult>)>;

// `inputs` follow Plan::inputs and must have the plan's types; the plan must
// be for the device's preset. `done` runs exactly once, on the thread that
// finished the run (the device's worker, the caller for a small run, or the
// thread that cancelled a queued one), so it should only convert and reply.
// A cancelled run ends with the token's reason (CANCELLED, DEADLINE_EXCEEDED).
// A debug run (options.debug) needs a plan built without fusion.
void RunPlanAsync(std::shared_ptr<const Plan> plan, std::vector<HostTensor> inputs, ExecOptions options,
                  device::Device& device, std::shared_ptr<device::CancelToken> cancel, RunDone done);

// RunPlanAsync, waiting for the result.
absl::StatusOr<ExecResult> RunPlan(std::shared_ptr<const Plan> plan, std::vector<HostTensor> inputs,
                                   ExecOptions options, device::Device& device,
                                   std::shared_ptr<device::CancelToken> cancel = nullptr);

}  // namespace npu::graph
