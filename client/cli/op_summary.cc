#include "client/cli/op_summary.h"

#include <algorithm>
#include <fstream>
#include <map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "client/cli/csv_line.h"
#include "client/cli/task_span.h"

namespace npu::client::cli {
namespace {

constexpr const char* kNotApplicable = "N/A";
// The model's own column, console only (msprof has none): cycles the task
// waited beyond its launch latency for issue slots and for cores held by other
// work, this run's or another client's (NodeProfile.wait_cycles).
constexpr const char* kWaitedColumn = "Waited(us)";

bool Separated(const npu::v1::Profile& p) { return p.core_architecture() != "coupled"; }

// msprof's PipeUtilization op_summary of an Atlas A2 (separated) chip.
const std::vector<std::string> kSeparatedColumns = {
    "Device_id", "Model ID", "Task ID", "Stream ID", "Op Name", "OP Type", "OP State", "Task Type",
    "Task Start Time(us)", "Task Duration(us)", "Task Wait Time(us)", "Block Dim", "Mix Block Dim", "HF32 Eligible",
    "Input Shapes", "Input Data Types", "Input Formats", "Output Shapes", "Output Data Types", "Output Formats",
    "Context ID", "aicore_time(us)", "aic_total_cycles", "aic_mac_time(us)", "aic_mac_ratio", "aic_scalar_time(us)",
    "aic_scalar_ratio", "aic_mte1_time(us)", "aic_mte1_ratio", "aic_mte2_time(us)", "aic_mte2_ratio",
    "aic_fixpipe_time(us)", "aic_fixpipe_ratio", "aic_icache_miss_rate", "aiv_time(us)", "aiv_total_cycles",
    "aiv_vec_time(us)", "aiv_vec_ratio", "aiv_scalar_time(us)", "aiv_scalar_ratio", "aiv_mte2_time(us)",
    "aiv_mte2_ratio", "aiv_mte3_time(us)", "aiv_mte3_ratio", "aiv_icache_miss_rate", "cube_utilization(%)"};

// msprof's PipeUtilization op_summary of an Atlas training (coupled) chip.
const std::vector<std::string> kCoupledColumns = {
    "Device_id", "Model ID", "Task ID", "Stream ID", "Op Name", "OP Type", "Task Type", "Task Start Time(us)",
    "Task Duration(us)", "Task Wait Time(us)", "Block Dim", "Input Shapes", "Input Data Types", "Input Formats",
    "Output Shapes", "Output Data Types", "Output Formats", "aicore_time(us)", "total_cycles", "vec_time(us)",
    "vec_ratio", "mac_time(us)", "mac_ratio", "scalar_time(us)", "scalar_ratio", "mte1_time(us)", "mte1_ratio",
    "mte2_time(us)", "mte2_ratio", "mte3_time(us)", "mte3_ratio", "icache_miss_rate", "memory_bound"};

const std::vector<std::string> kSeparatedConsole = {
    "Op Name", "OP Type", "Task Type", "Block Dim", "Task Start Time(us)", "Task Duration(us)", "Task Wait Time(us)",
    kWaitedColumn, "aicore_time(us)", "aic_mac_ratio", "aic_mte2_ratio", "aic_fixpipe_ratio", "aiv_time(us)",
    "aiv_vec_ratio", "aiv_mte2_ratio", "aiv_mte3_ratio"};

const std::vector<std::string> kCoupledConsole = {
    "Op Name", "OP Type", "Task Type", "Block Dim", "Task Start Time(us)", "Task Duration(us)", "Task Wait Time(us)",
    kWaitedColumn, "aicore_time(us)", "mac_ratio", "vec_ratio", "scalar_ratio", "mte1_ratio", "mte2_ratio", "mte3_ratio",
    "memory_bound"};

std::string Fixed(double v) { return absl::StrFormat("%.3f", v); }

std::string Shapes(const google::protobuf::RepeatedPtrField<npu::v1::TensorDesc>& ts) {
  if (ts.empty()) return kNotApplicable;
  return absl::StrJoin(ts, ";", [](std::string* out, const npu::v1::TensorDesc& t) {
    absl::StrAppend(out, absl::StrJoin(t.shape(), ","));
  });
}

std::string Types(const google::protobuf::RepeatedPtrField<npu::v1::TensorDesc>& ts) {
  if (ts.empty()) return kNotApplicable;
  return absl::StrJoin(ts, ";", [](std::string* out, const npu::v1::TensorDesc& t) {
    absl::StrAppend(out, npu::v1::DataType_Name(t.dtype()));
  });
}

std::string Formats(const google::protobuf::RepeatedPtrField<npu::v1::TensorDesc>& ts) {
  if (ts.empty()) return kNotApplicable;
  return absl::StrJoin(ts, ";", [](std::string* out, const npu::v1::TensorDesc& t) { out->append(t.format()); });
}

// Every cell of one node's row, by column name.
std::map<std::string, std::string> Cells(const npu::v1::Profile& profile, const npu::v1::NodeProfile& node,
                                         int index, uint64_t previous_end) {
  const double mhz = profile.clock_mhz() > 0 ? profile.clock_mhz() : 1.0;
  auto us = [mhz](double cycles) { return Fixed(cycles / mhz); };
  const auto [issue, done] = TaskSpanOf(node);
  uint64_t total = 0;
  for (const npu::v1::TileSlice& t : node.tiles()) total += t.end_cycle() - t.start_cycle();
  const int block_dim = node.block_dim();
  const npu::v1::UnitCycles& b = node.busy();
  std::map<std::string, std::string> c;
  c["Device_id"] = MsprofDeviceId(profile.device());
  c["Model ID"] = kNotApplicable;
  c["Task ID"] = absl::StrCat(index);
  c["Stream ID"] = kNotApplicable;
  c["Op Name"] = node.name();
  c["OP Type"] = node.op_type();
  c["OP State"] = "static";
  c["Task Type"] = node.task_type();
  c["Task Start Time(us)"] = us(static_cast<double>(issue > profile.start_cycle() ? issue - profile.start_cycle() : 0));
  c["Task Duration(us)"] = us(static_cast<double>(done - issue));
  c["Task Wait Time(us)"] = us(static_cast<double>(issue > previous_end ? issue - previous_end : 0));
  c[kWaitedColumn] = us(static_cast<double>(node.wait_cycles()));
  c["Block Dim"] = absl::StrCat(block_dim);
  c["Mix Block Dim"] = "0";
  c["HF32 Eligible"] = "NO";
  c["Input Shapes"] = Shapes(node.inputs());
  c["Input Data Types"] = Types(node.inputs());
  c["Input Formats"] = Formats(node.inputs());
  c["Output Shapes"] = Shapes(node.outputs());
  c["Output Data Types"] = Types(node.outputs());
  c["Output Formats"] = Formats(node.outputs());
  c["Context ID"] = kNotApplicable;
  const bool cores = block_dim > 0 && total > 0;
  auto time = [&](uint64_t busy) { return cores ? us(static_cast<double>(busy) / block_dim) : kNotApplicable; };
  auto ratio = [&](uint64_t busy) {
    return cores ? Fixed(static_cast<double>(busy) / static_cast<double>(total)) : kNotApplicable;
  };
  const std::string core_time = cores ? us(static_cast<double>(total) / block_dim) : kNotApplicable;
  const std::string cycles = cores ? absl::StrCat(total) : kNotApplicable;
  // One group of columns per kind of core: its time, cycles and units.
  struct Unit {
    const char* name;
    uint64_t busy;
  };
  auto group = [&](bool on, const char* time_col, const char* cycles_col, const char* prefix,
                   std::initializer_list<Unit> units) {
    c[time_col] = on ? core_time : kNotApplicable;
    c[cycles_col] = on ? cycles : kNotApplicable;
    for (const Unit& u : units) {
      c[absl::StrCat(prefix, u.name, "_time(us)")] = on ? time(u.busy) : kNotApplicable;
      c[absl::StrCat(prefix, u.name, "_ratio")] = on ? ratio(u.busy) : kNotApplicable;
    }
    c[absl::StrCat(prefix, "icache_miss_rate")] = kNotApplicable;
  };
  if (Separated(profile)) {
    const bool aic = node.task_type() == "AI_CORE", aiv = node.task_type() == "AI_VECTOR_CORE";
    group(aic, "aicore_time(us)", "aic_total_cycles", "aic_",
          {{"mac", b.cube()}, {"scalar", b.scalar()}, {"mte1", b.mte1()}, {"mte2", b.mte2()}, {"fixpipe", b.fixpipe()}});
    group(aiv, "aiv_time(us)", "aiv_total_cycles", "aiv_",
          {{"vec", b.vector()}, {"scalar", b.scalar()}, {"mte2", b.mte2()}, {"mte3", b.mte3()}});
    const uint64_t task = done - issue;
    const auto cube_cores = std::count_if(profile.cores().begin(), profile.cores().end(),
                                          [](const npu::v1::CoreProfile& k) { return k.kind() == "aic"; });
    c["cube_utilization(%)"] =
        aic && task > 0 && cube_cores > 0
            ? absl::StrFormat("%.3f", 100.0 * static_cast<double>(b.cube()) /
                                          (static_cast<double>(task) * static_cast<double>(cube_cores)))
            : kNotApplicable;
  } else {
    const bool on = node.task_type() == "AI_CORE";
    group(on, "aicore_time(us)", "total_cycles", "",
          {{"vec", b.vector()}, {"mac", b.cube()}, {"scalar", b.scalar()}, {"mte1", b.mte1()}, {"mte2", b.mte2()},
           {"mte3", b.mte3()}});
    const uint64_t compute = std::max(b.cube(), b.vector());
    c["memory_bound"] = on && cores && compute > 0
                            ? Fixed(static_cast<double>(b.mte2()) / static_cast<double>(compute))
                            : kNotApplicable;
  }
  return c;
}

}  // namespace

std::string MsprofDeviceId(const std::string& device) {
  const size_t colon = device.rfind(':');
  int n = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(device.substr(colon + 1), &n)) return kNotApplicable;
  return absl::StrCat(n);
}

const std::vector<std::string>& OpSummaryColumns(const npu::v1::Profile& profile) {
  return Separated(profile) ? kSeparatedColumns : kCoupledColumns;
}

const std::vector<std::string>& OpSummaryConsoleColumns(const npu::v1::Profile& profile) {
  return Separated(profile) ? kSeparatedConsole : kCoupledConsole;
}

std::vector<std::vector<std::string>> OpSummaryRows(const npu::v1::Profile& profile,
                                                    const std::vector<std::string>& columns) {
  std::vector<std::vector<std::string>> rows;
  uint64_t previous_end = profile.start_cycle();  // the first task waits from the run's arrival
  for (int i = 0; i < profile.nodes_size(); ++i) {
    const npu::v1::NodeProfile& node = profile.nodes(i);
    std::map<std::string, std::string> cells = Cells(profile, node, i, previous_end);
    std::vector<std::string> row;
    for (const std::string& name : columns) {
      auto it = cells.find(name);
      row.push_back(it == cells.end() ? kNotApplicable : it->second);
    }
    rows.push_back(std::move(row));
    previous_end = std::max(previous_end, TaskSpanOf(node).done);
  }
  return rows;
}

void WriteOpSummaryCsv(const npu::v1::Profile& profile, std::ostream& out) {
  auto line = [&out](const std::vector<std::string>& cells) { out << CsvLine(cells); };
  const std::vector<std::string>& columns = OpSummaryColumns(profile);
  line(columns);
  for (const auto& row : OpSummaryRows(profile, columns)) line(row);
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
