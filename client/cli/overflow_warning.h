// msprof's overflow alarm, for `npu run`: a warning per node whose results
// overflowed their type (fp16 saturated to +-65504 on presets that saturate,
// such as the 910, or became inf/NaN on the others), read from the profile's
// per-node overflow_elements. Porting users rely on it: a saturated value
// looks like an ordinary number downstream.
#pragma once

#include <ostream>

#include "npu/v1/profile.pb.h"

namespace npu::client::cli {

// Writes one "warning: ..." line per overflowing node and a closing hint;
// returns the number of nodes warned about (0 writes nothing).
int WarnAboutOverflow(const npu::v1::Profile& profile, std::ostream& out);

// `npu run --overflow-check` (msprobe's overflow_check): a line naming the
// first node whose results overflowed in the run's float mode, then a table
// of the overflowing nodes in the order they ran (topological), at most
// `limit` of them (msprobe's overflow_nums; -1: all). Returns how many nodes
// overflowed.
int ListOverflowingNodes(const npu::v1::Profile& profile, int limit, std::ostream& out);

}  // namespace npu::client::cli
