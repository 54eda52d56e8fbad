#include "server/graph/runner.h"

#include <future>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/graph/bounded_text.h"

namespace npu::graph {
namespace {

absl::Status CheckInputs(const Plan& plan, const std::vector<HostTensor>& inputs, const device::Device& device) {
  if (plan.preset.name != device.preset().name) {
    return absl::FailedPreconditionError(absl::StrCat("the graph was planned for ", plan.preset.name, "; ",
                                                      device.id(), " is an ", device.preset().name));
  }
  if (inputs.size() != plan.inputs.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the graph takes ", plan.inputs.size(), " inputs, ", inputs.size(), " were given"));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const PlanValue& v = plan.values[plan.inputs[i]];
    if (!(inputs[i].type() == v.type)) {
      return absl::InvalidArgumentError(absl::StrCat("input ", Quoted(v.name), " is ", ToString(inputs[i].type()),
                                                     "; the graph declares ", ToString(v.type)));
    }
  }
  return absl::OkStatus();
}

// What a cancelled run reports: the reason its caller gave up, and where it stopped.
absl::Status CancelledStatus(const device::CancelToken& cancel, const absl::Status& stopped) {
  absl::Status why = cancel.reason();
  if (why.ok()) return stopped;
  return absl::Status(why.code(), absl::StrCat(why.message(), " (", stopped.message(), ")"));
}

}  // namespace

void RunPlanAsync(std::shared_ptr<const Plan> plan, std::vector<HostTensor> inputs, ExecOptions options,
                  device::Device& device, std::shared_ptr<device::CancelToken> cancel, RunDone done) {
  if (plan == nullptr) return done(absl::InvalidArgumentError("no plan to run"));
  if (auto s = CheckInputs(*plan, inputs, device); !s.ok()) return done(s);
  if (options.debug && plan->fused) {
    return done(absl::FailedPreconditionError(
        "a debug run returns every node's output, so it needs a plan without fusion (PlanOptions::fuse = false)"));
  }
  if (cancel == nullptr) cancel = std::make_shared<device::CancelToken>();
  options.device_id = device.id();
  // A collective run waits for its group: never on the caller's thread.
  const bool small = plan->value_bytes <= kSmallRunBytes && options.collective == nullptr;

  // The job fills `result` while it holds the device; `done` hands it on once
  // the device is released.
  struct Shared {
    std::shared_ptr<const Plan> plan;
    std::vector<HostTensor> inputs;
    ExecOptions options;
    absl::StatusOr<ExecResult> result = absl::InternalError("the run did not execute");
  };
  auto shared = std::make_shared<Shared>(Shared{std::move(plan), std::move(inputs), std::move(options)});
  device.Submit(
      [shared](device::DeviceSession& session) {
        shared->result = ExecutePlan(*shared->plan, std::move(shared->inputs), shared->options, session);
      },
      cancel, small,
      [shared, cancel, done = std::move(done)](absl::Status device_status) {
        if (!device_status.ok()) return done(std::move(device_status));  // never ran, or threw
        if (!shared->result.ok() && cancel->cancelled()) {
          return done(CancelledStatus(*cancel, shared->result.status()));
        }
        done(std::move(shared->result));
      });
}

absl::StatusOr<ExecResult> RunPlan(std::shared_ptr<const Plan> plan, std::vector<HostTensor> inputs,
                                   ExecOptions options, device::Device& device,
                                   std::shared_ptr<device::CancelToken> cancel) {
  std::promise<absl::StatusOr<ExecResult>> finished;
  auto result = finished.get_future();
  RunPlanAsync(std::move(plan), std::move(inputs), std::move(options), device, std::move(cancel),
               [&finished](absl::StatusOr<ExecResult> r) { finished.set_value(std::move(r)); });
  return result.get();
}

}  // namespace npu::graph
