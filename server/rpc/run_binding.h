// Binding a Run request to a plan: which tensor feeds each graph input, and
// which outputs stay on the device.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "npu/v1/runtime.pb.h"
#include "server/device/device.h"
#include "server/graph/plan.h"
#include "server/core/tensor_store.h"

namespace npu::rpc {

struct RunBinding {
  std::vector<graph::HostTensor> inputs;  // Plan::inputs order
  std::vector<bool> keep_on_device;       // Plan::outputs order
};

// The tensors feeding `declared` (a graph's inputs, in order): every one fed
// exactly once, inline or by a handle of this tenant on `device`, fitting its
// declared dtype and shape (a dynamic dim, -1, takes any size); no other name.
absl::StatusOr<std::vector<graph::HostTensor>> ResolveInputs(const std::vector<v1::ValueInfo>& declared,
                                                             const v1::RunRequest& req, const std::string& tenant,
                                                             const device::Device& device, core::TensorStore& store);
std::vector<graph::TensorType> TypesOf(const std::vector<graph::HostTensor>& inputs);

// Resolved inputs against `plan` (exact types); keep_on_device names must be
// graph outputs.
absl::StatusOr<RunBinding> BindInputs(const graph::Plan& plan, std::vector<graph::HostTensor> inputs,
                                      const v1::RunRequest& req);

// ResolveInputs against the plan's inputs, then BindInputs.
absl::StatusOr<RunBinding> BindRun(const graph::Plan& plan, const v1::RunRequest& req, const std::string& tenant,
                                   const device::Device& device, core::TensorStore& store);

}  // namespace npu::rpc
