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

}  // namespace npu::client::cli
