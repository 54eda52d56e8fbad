// `npu stats`: server counters and per-device utilization.
#pragma once

#include <ostream>

#include "absl/status/status.h"
#include "client/client.h"

namespace npu::client::cli {

void PrintStats(const npu::v1::ServerStats& stats, std::ostream& out);
absl::Status RunStatsCommand(Client& client, std::ostream& out);

}  // namespace npu::client::cli
