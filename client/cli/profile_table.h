// What `npu run --profile` prints: the op summary (CANN msprof op_summary
// columns, see op_summary.h), then the run's totals and the cores' mean
// utilisation per unit. Cycles are modeled, not measured.
#pragma once

#include <ostream>

#include "npu/v1/profile.pb.h"

namespace npu::client::cli {

void PrintProfile(const npu::v1::Profile& profile, std::ostream& out);

}  // namespace npu::client::cli
