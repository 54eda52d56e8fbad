// A run's profile as Chrome trace-event JSON (opens in Perfetto and
// chrome://tracing): one process per device; per AI core the run used one
// track of tile slices and one track per unit it kept busy; one "ops" track
// with a slice per node (issue to done); an "overflow" counter track.
// Timestamps are microseconds of *modeled* device time (cycles / clock) from
// the run's arrival; the device's absolute cycle of that arrival is in
// otherData (start_cycle), so runs of several clients can be lined up.
#pragma once

#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "npu/v1/profile.pb.h"

namespace npu::client::cli {

// Track ids: tid 0 is the ops track; core c owns tids c*8+1 (its tiles) and
// c*8+2 .. c*8+8 (cube, vector, scalar, mte1, mte2, mte3, fixpipe); only the
// tracks with slices are named.
//   op slice:   cat "op", from issue to done, args with the op's cycles and wait
//   tile slice: cat "tile", name = node name, one per scheduled tile
//   unit slice: cat "unit", name = unit, drawn from the tile's start for the
//               unit's busy cycles (double buffering spreads it over the tile;
//               the length, not the placement, is what the model says)
//   counter:    "overflow", the results each op saturated or made inf/NaN
void WriteChromeTrace(const npu::v1::Profile& profile, std::ostream& out);
absl::Status WriteChromeTraceFile(const npu::v1::Profile& profile, const std::string& path);
// Several devices' runs of one step (a data-parallel training step): one
// process per device, each placed from its own run's arrival.
void WriteChromeTrace(absl::Span<const npu::v1::Profile> profiles, std::ostream& out);
absl::Status WriteChromeTraceFile(absl::Span<const npu::v1::Profile> profiles, const std::string& path);

}  // namespace npu::client::cli
