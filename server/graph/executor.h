// Runs a plan on a device: binds inputs, computes every node through its op's
// kernels, places the counted work on the device's cores, and assembles the
// outputs and the profile.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "npu/v1/profile.pb.h"
#include "server/device/device.h"
#include "server/graph/plan.h"

namespace npu::graph {

struct ExecOptions {
  bool profile = false;
  bool debug = false;  // keep every node output
  std::string device_id;
  // A data-parallel step: the group its devices meet in (HcclAllReduce) and
  // this run's rank. Such a run never runs on its caller's thread (it waits
  // for the others: runner.h).
  std::shared_ptr<device::CollectiveGroup> collective;
  int rank = 0;
};

struct ExecResult {
  std::vector<HostTensor> outputs;                                // Plan::outputs order
  std::vector<std::pair<std::string, HostTensor>> intermediates;  // debug: every node output, in order
  v1::Profile profile;                                            // filled when options.profile
  // The run's float status (NPUGetFloatStatus): results its ops overflowed
  // (TileWork::overflow_elements summed over every node). Each run starts clear.
  uint64_t overflow_elements = 0;
};

// `inputs` follow Plan::inputs; their types must already match. Runs on the
// device's executor thread (inside Device::Execute).
absl::StatusOr<ExecResult> ExecutePlan(const Plan& plan, std::vector<HostTensor> inputs, const ExecOptions& options,
                                       device::DeviceSession& session);

}  // namespace npu::graph
