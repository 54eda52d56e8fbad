// The op summary of a profile, in CANN msprof's op_summary columns, so people
// who read msprof output read this the same way. Cycles are modeled.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "npu/v1/profile.pb.h"

namespace npu::client::cli {

// Column names, in order, exactly as msprof's op_summary CSV spells them.
const std::vector<std::string>& OpSummaryColumns();

// One row of cells per node, following OpSummaryColumns():
//   Task Duration(us) = (end - start) / clock
//   aic_total_cycles  = the op's core-cycles: sum of its tiles' durations
//   aicore_time(us)   = aic_total_cycles / block_dim / clock (mean time per core)
//   <unit>_ratio      = unit busy cycles / (task cycles * block_dim)
// aic_* ratios are filled for AI_CORE tasks and aiv_* for AI_VECTOR_CORE tasks;
// the others read "N/A", as msprof writes them.
std::vector<std::vector<std::string>> OpSummaryRows(const npu::v1::Profile& profile);

// The same table as CSV (RFC 4180 quoting), header first.
void WriteOpSummaryCsv(const npu::v1::Profile& profile, std::ostream& out);
absl::Status WriteOpSummaryCsvFile(const npu::v1::Profile& profile, const std::string& path);

}  // namespace npu::client::cli
