#include "client/cli/stats_command.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/cli/text_table.h"

namespace npu::client::cli {
namespace {

std::string Percent(double fraction) { return absl::StrFormat("%.1f%%", 100.0 * fraction); }

}  // namespace

void PrintStats(const npu::v1::ServerStats& stats, std::ostream& out) {
  out << absl::StrFormat("uptime %.1f s, runs %d (%d failed), uploads %d, downloads %d\n",
                         stats.uptime_s(), stats.runs_total(), stats.runs_failed(),
                         stats.uploads_total(), stats.downloads_total());
  if (stats.devices().empty()) return;
  using Align = TextTable::Align;
  TextTable table({"DEVICE", "RUNS", "QUEUE", "TIMELINE CYCLES", "CUBE", "VECTOR", "SCALAR", "MTE1",
                   "MTE2", "MTE3", "FIXPIPE", "MEMORY USED", "HELD"},
                  {Align::kLeft, Align::kRight, Align::kRight, Align::kRight, Align::kRight,
                   Align::kRight, Align::kRight, Align::kRight, Align::kRight, Align::kRight,
                   Align::kRight, Align::kRight, Align::kRight});
  for (const npu::v1::DeviceStats& device : stats.devices()) {
    const npu::v1::UnitUtilization& use = device.utilization();
    table.AddRow({device.device(), absl::StrCat(device.runs()), absl::StrCat(device.queue_depth()),
                  absl::StrCat(device.timeline_cycles()), Percent(use.cube()),
                  Percent(use.vector()), Percent(use.scalar()), Percent(use.mte1()),
                  Percent(use.mte2()), Percent(use.mte3()), Percent(use.fixpipe()),
                  FormatBytes(device.memory_used_bytes()),
                  device.wedged() ? absl::StrFormat("%.1f s WEDGED", device.held_s())
                                  : absl::StrFormat("%.1f s", device.held_s())});
  }
  table.Print(out);
}

absl::Status RunStatsCommand(Client& client, std::ostream& out) {
  absl::StatusOr<npu::v1::ServerStats> stats = client.GetStats();
  if (!stats.ok()) return stats.status();
  PrintStats(*stats, out);
  return absl::OkStatus();
}

}  // namespace npu::client::cli
