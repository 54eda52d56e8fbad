// Binding a Run request to a plan: which tensor feeds each graph input, and
// which outputs stay on the device.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "npu/v1/runtime.pb.h"
#include "server/device/device.h"
#include "server/graph/plan.h"
#include "server/rpc/tensor_store.h"

namespace npu::rpc {

struct RunBinding {
  std::vector<graph::HostTensor> inputs;  // Plan::inputs order
  std::vector<bool> keep_on_device;       // Plan::outputs order
};

// Every graph input must be fed exactly once, inline or by a handle of this
// tenant on `device`, with the declared dtype and shape; keep_on_device names
// must be graph outputs.
absl::StatusOr<RunBinding> BindRun(const graph::Plan& plan, const v1::RunRequest& req, const std::string& tenant,
                                   const device::Device& device, TensorStore& store);

}  // namespace npu::rpc
