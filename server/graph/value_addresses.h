// Where each value of a run lives in device memory, for the device model's L2
// (server/device/l2_cache.h): intermediates at their arena offsets in the
// device's run arena (one block per device, so runs reuse its addresses),
// constants in their plan's own space (the same addresses every run of the
// plan: weights stay in device memory), the run's inputs and results in a
// space fresh for the run (the host copies them in and out). Views take their
// input's address when their node runs (ExecutePlan).
#pragma once

#include <cstdint>
#include <vector>

#include "server/device/address_range.h"
#include "server/graph/plan.h"

namespace npu::graph {

// One range per value of `plan` (views: unknown until their node runs).
// `run_space` is the run's fresh space (CorePool::NextFreshSpace).
std::vector<device::AddressRange> ValueAddresses(const Plan& plan, uint64_t run_space);

}  // namespace npu::graph
