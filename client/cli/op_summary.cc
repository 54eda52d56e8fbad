#include "client/cli/op_summary.h"

#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"

namespace npu::client::cli {
namespace {

constexpr const char* kNotApplicable = "N/A";

std::string Ratio(uint64_t busy, double denominator) {
  if (denominator <= 0) return kNotApplicable;
  return absl::StrFormat("%.3f", static_cast<double>(busy) / denominator);
}

std::string Micros(double cycles, double clock_mhz) {
  if (clock_mhz <= 0) return kNotApplicable;
  return absl::StrFormat("%.3f", cycles / clock_mhz);
}

std::string CsvCell(const std::string& cell) {
  if (cell.find_first_of(",\"\n\r") == std::string::npos) return cell;
  return absl::StrCat("\"", absl::StrReplaceAll(cell, {{"\"", "\"\""}}), "\"");
}

}  // namespace

const std::vector<std::string>& OpSummaryColumns() {
  static const std::vector<std::string> columns = {
      "Op Name",           "OP Type",          "Task Type",         "Block Dim",
      "Task Duration(us)", "aicore_time(us)",  "aic_total_cycles",  "aic_mac_ratio",
      "aic_scalar_ratio",  "aic_mte1_ratio",   "aic_mte2_ratio",    "aic_fixpipe_ratio",
      "aiv_vec_ratio",     "aiv_scalar_ratio", "aiv_mte2_ratio",    "aiv_mte3_ratio"};
  return columns;
}

std::vector<std::vector<std::string>> OpSummaryRows(const npu::v1::Profile& profile) {
  std::vector<std::vector<std::string>> rows;
  const double mhz = profile.clock_mhz();
  for (const npu::v1::NodeProfile& node : profile.nodes()) {
    const uint64_t task = node.end_cycle() > node.start_cycle() ? node.end_cycle() - node.start_cycle() : 0;
    uint64_t core_cycles = 0;
    for (const npu::v1::TileSlice& t : node.tiles()) core_cycles += t.end_cycle() - t.start_cycle();
    const int block_dim = node.block_dim();
    const double denominator = static_cast<double>(task) * block_dim;
    const npu::v1::UnitCycles& b = node.busy();
    const bool aic = node.task_type() == "AI_CORE";
    const bool aiv = node.task_type() == "AI_VECTOR_CORE";
    auto aic_ratio = [&](uint64_t busy) { return aic ? Ratio(busy, denominator) : kNotApplicable; };
    auto aiv_ratio = [&](uint64_t busy) { return aiv ? Ratio(busy, denominator) : kNotApplicable; };
    rows.push_back({node.name(), node.op_type(), node.task_type(), absl::StrCat(block_dim),
                    Micros(static_cast<double>(task), mhz),
                    block_dim > 0 ? Micros(static_cast<double>(core_cycles) / block_dim, mhz) : kNotApplicable,
                    absl::StrCat(core_cycles), aic_ratio(b.cube()), aic_ratio(b.scalar()), aic_ratio(b.mte1()),
                    aic_ratio(b.mte2()), aic_ratio(b.fixpipe()), aiv_ratio(b.vector()), aiv_ratio(b.scalar()),
                    aiv_ratio(b.mte2()), aiv_ratio(b.mte3())});
  }
  return rows;
}

void WriteOpSummaryCsv(const npu::v1::Profile& profile, std::ostream& out) {
  auto line = [&out](const std::vector<std::string>& cells) {
    for (size_t i = 0; i < cells.size(); ++i) out << (i ? "," : "") << CsvCell(cells[i]);
    out << "\n";
  };
  line(OpSummaryColumns());
  for (const auto& row : OpSummaryRows(profile)) line(row);
}

absl::Status WriteOpSummaryCsvFile(const npu::v1::Profile& profile, const std::string& path) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return absl::PermissionDeniedError(absl::StrCat("cannot write op summary \"", path, "\""));
  WriteOpSummaryCsv(profile, f);
  f.close();
  if (!f) return absl::DataLossError(absl::StrCat("error writing op summary \"", path, "\""));
  return absl::OkStatus();
}

}  // namespace npu::client::cli
