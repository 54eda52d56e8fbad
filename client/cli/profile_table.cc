#include "client/cli/profile_table.h"

#include "absl/strings/str_format.h"
#include "client/cli/op_summary.h"
#include "client/cli/text_table.h"

namespace npu::client::cli {
namespace {

// Mean utilisation of each unit over the run's span and all cores.
void PrintUnitUtilisation(const npu::v1::Profile& profile, std::ostream& out) {
  if (profile.cores().empty() || profile.total_cycles() == 0) return;
  npu::v1::UnitCycles sum;
  for (const npu::v1::CoreProfile& c : profile.cores()) {
    const npu::v1::UnitCycles& b = c.busy();
    sum.set_cube(sum.cube() + b.cube());
    sum.set_vector(sum.vector() + b.vector());
    sum.set_scalar(sum.scalar() + b.scalar());
    sum.set_mte1(sum.mte1() + b.mte1());
    sum.set_mte2(sum.mte2() + b.mte2());
    sum.set_mte3(sum.mte3() + b.mte3());
    sum.set_fixpipe(sum.fixpipe() + b.fixpipe());
  }
  const double span = static_cast<double>(profile.total_cycles()) * profile.cores_size();
  auto pct = [span](uint64_t busy) { return 100.0 * static_cast<double>(busy) / span; };
  out << absl::StrFormat(
      "cores: %d, mean utilisation over the run: cube %.1f%%, vector %.1f%%, scalar %.1f%%, mte1 %.1f%%, "
      "mte2 %.1f%%, mte3 %.1f%%, fixpipe %.1f%%\n",
      profile.cores_size(), pct(sum.cube()), pct(sum.vector()), pct(sum.scalar()), pct(sum.mte1()),
      pct(sum.mte2()), pct(sum.mte3()), pct(sum.fixpipe()));
}

}  // namespace

void PrintProfile(const npu::v1::Profile& profile, std::ostream& out) {
  const std::vector<std::string>& columns = OpSummaryConsoleColumns(profile);
  std::vector<TextTable::Align> aligns(columns.size(), TextTable::Align::kRight);
  for (int i = 0; i < 3; ++i) aligns[i] = TextTable::Align::kLeft;  // names and types
  TextTable table(columns, aligns);
  for (auto& row : OpSummaryRows(profile, columns)) table.AddRow(std::move(row));
  out << absl::StrFormat("op summary: %s (%s, %.0f MHz); cycles are modeled, not measured\n", profile.device(),
                         profile.preset(), profile.clock_mhz());
  table.Print(out);
  uint64_t waited = 0, overflow = 0;
  for (const npu::v1::NodeProfile& n : profile.nodes()) {
    waited += n.wait_cycles();
    overflow += n.overflow_elements();
  }
  out << absl::StrFormat(
      "total: cycles %d..%d (%d cycles), device_time_us %.3f, host_time_us %.3f, queue %d cycles, "
      "ops waited %d cycles, model_version %s\n",
      profile.start_cycle(), profile.end_cycle(), profile.total_cycles(), profile.device_time_us(),
      profile.host_time_us(), profile.queue_cycles(), waited,
      profile.model_version().empty() ? "-" : profile.model_version());
  if (overflow > 0) {
    out << absl::StrFormat("overflow: %d results saturated or inf/NaN (per op: overflow_elements)\n", overflow);
  }
  PrintUnitUtilisation(profile, out);
}

}  // namespace npu::client::cli
