// The per-node profile table `npu run --profile` prints.
#pragma once

#include <ostream>

#include "npu/v1/profile.pb.h"

namespace npu::client::cli {

// One row per node (name, op, task type, block dim, start..end cycle,
// duration in us = cycles / clock MHz, Cube/Vector/MTE2 busy cycles), then
// the run's totals. Cycles are modeled, not measured.
void PrintProfile(const npu::v1::Profile& profile, std::ostream& out);

}  // namespace npu::client::cli
