#include "client/cli/profile_table.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/cli/text_table.h"

namespace npu::client::cli {
namespace {

std::string Microseconds(uint64_t cycles, double clock_mhz) {
  if (clock_mhz <= 0) return "-";
  return absl::StrFormat("%.3f", static_cast<double>(cycles) / clock_mhz);
}

}  // namespace

void PrintProfile(const npu::v1::Profile& profile, std::ostream& out) {
  using Align = TextTable::Align;
  TextTable table({"NODE", "OP", "TASK", "BLOCK", "CYCLES", "DURATION US", "CUBE", "VECTOR", "MTE2"},
                  {Align::kLeft, Align::kLeft, Align::kLeft, Align::kRight, Align::kRight,
                   Align::kRight, Align::kRight, Align::kRight, Align::kRight});
  for (const npu::v1::NodeProfile& node : profile.nodes()) {
    const uint64_t cycles =
        node.end_cycle() >= node.start_cycle() ? node.end_cycle() - node.start_cycle() : 0;
    table.AddRow({node.name(), node.op_type(), node.task_type(), absl::StrCat(node.block_dim()),
                  absl::StrCat(node.start_cycle(), "..", node.end_cycle()),
                  Microseconds(cycles, profile.clock_mhz()), absl::StrCat(node.busy().cube()),
                  absl::StrCat(node.busy().vector()), absl::StrCat(node.busy().mte2())});
  }
  out << absl::StrFormat("profile: %s (%s, %.0f MHz), modeled cycles\n", profile.device(),
                         profile.preset(), profile.clock_mhz());
  table.Print(out);
  out << absl::StrFormat(
      "total: %d cycles, device_time_us %.3f, host_time_us %.3f, queue %d cycles, "
      "model_version %s\n",
      profile.total_cycles(), profile.device_time_us(), profile.host_time_us(),
      profile.queue_cycles(), profile.model_version().empty() ? "-" : profile.model_version());
}

}  // namespace npu::client::cli
