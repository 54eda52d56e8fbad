// Wire tensors <-> host tensors.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "npu/v1/tensor.pb.h"
#include "server/graph/host_tensor.h"

namespace npu::rpc {

// Checks dtype, shape, byte length and BOOL values, then views the message's bytes without
// copying: `msg` must outlive the result (it does for the duration of a call).
absl::StatusOr<graph::HostTensor> ViewTensor(const v1::Tensor& msg, const std::string& what);

// Copies a host tensor into a message.
void CopyToProto(const graph::HostTensor& t, v1::Tensor* msg);

}  // namespace npu::rpc
