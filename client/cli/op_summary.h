// The op summary of a profile in CANN msprof's op_summary layout, so people
// who read (or wrote scripts for) msprof output read this the same way. The
// layout is the one msprof writes for the chip: separated chips (910B, Atlas
// A2: cube and vector cores apart) get the aic_*/aiv_* columns, coupled chips
// (910, 310: one AI core runs both) the unprefixed ones; "N/A" where the model
// has nothing. Cycles are modeled.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "npu/v1/profile.pb.h"

namespace npu::client::cli {

// Column names, in msprof's order, exactly as msprof's CSV spells them, for
// the profile's chip (Profile.core_architecture).
const std::vector<std::string>& OpSummaryColumns(const npu::v1::Profile& profile);

// A shorter set for a terminal: names, task, times, the main ratios, and one
// column of the model's own, Waited(us): the cycles the task waited beyond its
// launch latency for issue slots and for cores held by other work, this run's
// or another client's (NodeProfile.wait_cycles).
const std::vector<std::string>& OpSummaryConsoleColumns(const npu::v1::Profile& profile);

// One row of cells per node, following `columns` (a subset of
// OpSummaryColumns or OpSummaryConsoleColumns, in any order). Definitions, as msprof's:
//   Task Start Time(us)  = issue, from the run's arrival
//   Task Duration(us)    = issue to done (launch, blocks, finish)
//   Task Wait Time(us)   = from the previous task's end to this one's start
//   aic_total_cycles     = the sum of the op's block durations (per core)
//   aicore_time(us)      = aic_total_cycles / block_dim / clock
//   <unit>_time(us)      = the unit's busy cycles / block_dim / clock
//   <unit>_ratio         = the unit's busy cycles / aic_total_cycles
//   memory_bound         = mte2_ratio / max(mac_ratio, vec_ratio)
//   cube_utilization(%)  = Cube busy cycles / (Task Duration x the chip's cube cores)
// aic_* cells are filled for AI_CORE tasks and aiv_* for AI_VECTOR_CORE tasks
// on separated chips; on coupled chips every task is AI_CORE.
std::vector<std::vector<std::string>> OpSummaryRows(const npu::v1::Profile& profile,
                                                    const std::vector<std::string>& columns);

// msprof's Device_id cell: "npu:3" -> "3"; anything else -> "N/A".
std::string MsprofDeviceId(const std::string& device);

// The full table as CSV (RFC 4180 quoting), header first.
void WriteOpSummaryCsv(const npu::v1::Profile& profile, std::ostream& out);
absl::Status WriteOpSummaryCsvFile(const npu::v1::Profile& profile, const std::string& path);

}  // namespace npu::client::cli
