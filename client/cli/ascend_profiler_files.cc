#include "client/cli/ascend_profiler_files.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <utility>

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "client/cli/chrome_trace.h"
#include "client/cli/csv_line.h"
#include "client/cli/json_values.h"
#include "client/cli/op_summary.h"
#include "client/cli/task_span.h"

namespace npu::client::cli {
namespace {

namespace fs = std::filesystem;
using google::protobuf::Struct;
using google::protobuf::Value;
using Interval = std::pair<uint64_t, uint64_t>;  // [begin, end) in device cycles

constexpr const char* kHccl = "HCCL";
const std::vector<std::string> kShapeColumns = {"Input Shapes",  "Input Data Types",  "Input Formats",
                                                "Output Shapes", "Output Data Types", "Output Formats"};

std::vector<std::string> KernelColumnsFor(const npu::v1::Profile& profile) {
  std::vector<std::string> c = {"Device_id",   "Step Id",  "Model ID", "Task ID",          "Stream ID",
                                "Name",        "Type",     "OP State", "Accelerator Core", "Start Time(us)",
                                "Duration(us)", "Wait Time(us)", "Block Num", "Mix Block Num", "HF32 Eligible"};
  c.insert(c.end(), kShapeColumns.begin(), kShapeColumns.end());
  c.push_back("Context ID");
  // The pipe columns: op_summary's from its first time column on.
  const std::vector<std::string>& summary = OpSummaryColumns(profile);
  auto first = std::find(summary.begin(), summary.end(), "aicore_time(us)");
  c.insert(c.end(), first, summary.end());
  return c;
}

// Microseconds at the profiler's precision (3 decimals), so sums of printed
// cells are the printed sums.
double Us(double cycles, const npu::v1::Profile& p) {
  const double mhz = p.clock_mhz() > 0 ? p.clock_mhz() : 1.0;
  return std::round(cycles / mhz * 1000.0) / 1000.0;
}
std::string Fixed(double v) { return absl::StrFormat("%.3f", v); }

// The length of the union of `spans`.
uint64_t Covered(std::vector<Interval> spans) {
  std::sort(spans.begin(), spans.end());
  uint64_t total = 0, end = 0;
  for (const auto& [b, e] : spans) {
    const uint64_t from = std::max(b, end);
    if (e > from) total += e - from;
    end = std::max(end, e);
  }
  return total;
}


absl::Status WriteFile(const fs::path& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  f.close();
  if (!f) return absl::PermissionDeniedError(absl::StrCat("cannot write ", path.string()));
  return absl::OkStatus();
}

absl::Status WriteJson(const fs::path& path, const Struct& s) {
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  if (auto st = google::protobuf::util::MessageToJsonString(s, &json, options); !st.ok()) {
    return absl::InternalError(absl::StrCat(path.string(), ": ", st.message().as_string()));
  }
  return WriteFile(path, json);
}

struct OpTimes {
  int64_t count = 0;
  double total = 0, min = 0, max = 0;
};

// kernel_details.csv of one rank (every step), and its op statistics.
std::string KernelDetails(const std::vector<const npu::v1::Profile*>& steps, const std::vector<int64_t>& ids,
                          std::map<std::pair<std::string, std::string>, OpTimes>& stats) {
  const npu::v1::Profile& first = *steps.front();
  const std::vector<std::string> columns = KernelColumnsFor(first);
  std::vector<std::string> taken;  // the cells op_summary computes: shapes, types, formats, the pipes
  const std::vector<std::string>& summary_columns = OpSummaryColumns(first);
  for (const std::string& c : columns) {
    if (std::find(summary_columns.begin(), summary_columns.end(), c) != summary_columns.end()) taken.push_back(c);
  }
  std::string csv = CsvLine(columns);
  const uint64_t origin = first.start_cycle();  // the first step's arrival: times run on across steps
  int task = 0;
  for (size_t s = 0; s < steps.size(); ++s) {
    const npu::v1::Profile& p = *steps[s];
    const auto summary = OpSummaryRows(p, taken);
    uint64_t previous_end = p.start_cycle();
    for (int i = 0; i < p.nodes_size(); ++i) {
      const npu::v1::NodeProfile& node = p.nodes(i);
      const auto [issue, done] = TaskSpanOf(node);
      std::map<std::string, std::string> c;
      for (size_t k = 0; k < taken.size(); ++k) c[taken[k]] = summary[i][k];
      const double duration = Us(static_cast<double>(done - issue), p);
      c["Device_id"] = MsprofDeviceId(p.device());
      c["Step Id"] = absl::StrCat(ids[s]);
      c["Model ID"] = "N/A";
      c["Task ID"] = absl::StrCat(task++);
      c["Stream ID"] = "N/A";
      c["Name"] = node.name();
      c["Type"] = node.op_type();
      c["OP State"] = node.task_type() == kHccl ? "N/A" : "static";
      c["Accelerator Core"] = node.task_type();
      c["Start Time(us)"] = Fixed(Us(static_cast<double>(issue - std::min(issue, origin)), p));
      c["Duration(us)"] = Fixed(duration);
      c["Wait Time(us)"] = Fixed(Us(static_cast<double>(issue > previous_end ? issue - previous_end : 0), p));
      c["Block Num"] = absl::StrCat(node.block_dim());
      c["Mix Block Num"] = "0";
      c["HF32 Eligible"] = "NO";
      previous_end = std::max(previous_end, done);
      std::vector<std::string> row;
      for (const std::string& col : columns) row.push_back(c.count(col) ? c[col] : "N/A");
      csv += CsvLine(row);
      OpTimes& t = stats[{node.op_type(), node.task_type()}];
      t.min = t.count == 0 ? duration : std::min(t.min, duration);
      t.max = std::max(t.max, duration);
      t.total += duration;
      ++t.count;
    }
  }
  return csv;
}

std::string OpStatistic(const std::string& device_id, const std::map<std::pair<std::string, std::string>, OpTimes>& stats) {
  std::vector<std::pair<std::pair<std::string, std::string>, OpTimes>> rows(stats.begin(), stats.end());
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.total > b.second.total; });
  double all = 0;
  for (const auto& r : rows) all += r.second.total;
  std::string csv = CsvLine(OpStatisticColumns());
  for (const auto& [key, t] : rows) {
    csv += CsvLine({device_id, key.first, key.second, absl::StrCat(t.count), Fixed(t.total), Fixed(t.min),
                    Fixed(t.total / static_cast<double>(t.count)), Fixed(t.max),
                    Fixed(all > 0 ? 100.0 * t.total / all : 0.0)});
  }
  return csv;
}

// One step of one rank: its length and where the time went.
std::vector<std::string> StepTrace(int64_t step, const npu::v1::Profile& p) {
  std::vector<Interval> compute, comm, both;
  uint64_t first_issue = p.end_cycle();
  for (const npu::v1::NodeProfile& node : p.nodes()) {
    const auto [issue, done] = TaskSpanOf(node);
    (node.task_type() == kHccl ? comm : compute).push_back({issue, done});
    both.push_back({issue, done});
    first_issue = std::min(first_issue, issue);
  }
  const uint64_t length = p.end_cycle() > p.start_cycle() ? p.end_cycle() - p.start_cycle() : 0;
  const uint64_t computing = Covered(compute), communication = Covered(comm), busy = Covered(both);
  const uint64_t overlapped = computing + communication - busy;  // |A n B| = |A| + |B| - |A u B|
  // Printed so that Computing + Communication(Not Overlapped) + Free is the step's length.
  const double len_us = Us(static_cast<double>(length), p), computing_us = Us(static_cast<double>(computing), p);
  const double comm_us = Us(static_cast<double>(communication), p), overlapped_us = Us(static_cast<double>(overlapped), p);
  auto exact = [](double us) { return std::round(us * 1000.0) / 1000.0 + 0.0; };  // + 0.0: no "-0.000"
  const double not_overlapped = exact(comm_us - overlapped_us);
  const double free_us = exact(len_us - computing_us - not_overlapped);
  const double preparing = Us(static_cast<double>(first_issue > p.start_cycle() ? first_issue - p.start_cycle() : 0), p);
  return {MsprofDeviceId(p.device()), absl::StrCat(step), Fixed(computing_us), Fixed(not_overlapped), Fixed(overlapped_us),
          Fixed(comm_us), Fixed(free_us), Fixed(len_us), Fixed(0.0), Fixed(not_overlapped), Fixed(preparing)};
}

// communication.json and communication_matrix.json of one rank.
void Communication(const std::vector<const npu::v1::Profile*>& steps, const std::vector<int64_t>& ids, int rank,
                   int world, Struct& comm, Struct& matrix) {
  for (size_t s = 0; s < steps.size(); ++s) {
    const npu::v1::Profile& p = *steps[s];
    Struct ops, pairs;
    for (const npu::v1::NodeProfile& node : p.nodes()) {
      if (node.task_type() != kHccl) continue;
      const auto [issue, done] = TaskSpanOf(node);
      const std::string key = absl::StrCat(node.name(), "@hccl_world_group");
      const double elapse = Us(static_cast<double>(done - issue), p) / 1000.0;
      const double transit = Us(static_cast<double>(node.end_cycle() - node.start_cycle()), p) / 1000.0;
      const double wait = Us(static_cast<double>(node.start_cycle() > issue ? node.start_cycle() - issue : 0), p) / 1000.0;
      const double idle = std::max(0.0, elapse - transit - wait);
      const double mb = static_cast<double>(node.comm_bytes()) / 1e6;
      Struct time;
      auto& t = *time.mutable_fields();
      t["Start Timestamp(us)"] = JsonNumber(Us(static_cast<double>(issue), p));
      t["Elapse Time(ms)"] = JsonNumber(elapse);
      t["Transit Time(ms)"] = JsonNumber(transit);
      t["Wait Time(ms)"] = JsonNumber(wait);
      t["Synchronization Time(ms)"] = JsonNumber(0.0);
      t["Idle Time(ms)"] = JsonNumber(idle);
      t["Wait Time Ratio"] = JsonNumber(wait + transit > 0 ? wait / (wait + transit) : 0.0);
      t["Synchronization Time Ratio"] = JsonNumber(0.0);
      Struct bandwidth;
      for (const char* link : {"HCCS", "PCIE", "RDMA", "SDMA"}) {
        const bool used = std::string(link) == "HCCS";
        Struct b;
        auto& f = *b.mutable_fields();
        f["Transit Size(MB)"] = JsonNumber(used ? mb : 0.0);
        f["Transit Time(ms)"] = JsonNumber(used ? transit : 0.0);
        f["Bandwidth(GB/s)"] = JsonNumber(used && transit > 0 ? mb / transit : 0.0);  // MB per ms is GB per s
        f["Large Packet Ratio"] = JsonNumber(0.0);
        f["Size Distribution"].mutable_struct_value();
        *(*bandwidth.mutable_fields())[link].mutable_struct_value() = b;
      }
      Struct op;
      *(*op.mutable_fields())["Communication Time Info"].mutable_struct_value() = time;
      *(*op.mutable_fields())["Communication Bandwidth Info"].mutable_struct_value() = bandwidth;
      *(*ops.mutable_fields())[key].mutable_struct_value() = op;
      // The ring: this rank sends its share to the next rank (HCCL's ring inside a server).
      if (world > 1) {
        Struct link;
        auto& l = *link.mutable_fields();
        l["Transport Type"] = JsonText("HCCS");
        l["Transit Size(MB)"] = JsonNumber(mb);
        l["Transit Time(ms)"] = JsonNumber(transit);
        l["Bandwidth(GB/s)"] = JsonNumber(transit > 0 ? mb / transit : 0.0);
        l["Op Name"] = JsonText(node.name());
        Struct links;
        *(*links.mutable_fields())[absl::StrCat(rank, "-", (rank + 1) % world)].mutable_struct_value() = link;
        *(*pairs.mutable_fields())[key].mutable_struct_value() = links;
      }
    }
    const std::string step = absl::StrCat("step", ids[s]);
    Struct c;
    *(*c.mutable_fields())["collective"].mutable_struct_value() = ops;
    (*c.mutable_fields())["p2p"].mutable_struct_value();
    *(*comm.mutable_fields())[step].mutable_struct_value() = c;
    Struct m;
    *(*m.mutable_fields())["collective"].mutable_struct_value() = pairs;
    (*m.mutable_fields())["p2p"].mutable_struct_value();
    *(*matrix.mutable_fields())[step].mutable_struct_value() = m;
  }
}

std::string Timestamp() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  return absl::StrFormat("%04d%02d%02d%02d%02d%02d%03d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                         tm.tm_min, tm.tm_sec, static_cast<int>(ms));
}

}  // namespace

const std::vector<std::string>& KernelDetailsColumns(const npu::v1::Profile& profile) {
  static const std::vector<std::string> separated = [] {
    npu::v1::Profile p;
    p.set_core_architecture("separated");
    return KernelColumnsFor(p);
  }();
  static const std::vector<std::string> coupled = [] {
    npu::v1::Profile p;
    p.set_core_architecture("coupled");
    return KernelColumnsFor(p);
  }();
  return profile.core_architecture() == "coupled" ? coupled : separated;
}

const std::vector<std::string>& OpStatisticColumns() {
  static const std::vector<std::string> c = {"Device_id",      "OP Type",       "Core Type",     "Count",
                                             "Total Time(us)", "Min Time(us)",  "Avg Time(us)",  "Max Time(us)",
                                             "Ratio(%)"};
  return c;
}

const std::vector<std::string>& StepTraceTimeColumns() {
  static const std::vector<std::string> c = {"Device_id",
                                             "Step",
                                             "Computing",
                                             "Communication(Not Overlapped)",
                                             "Overlapped",
                                             "Communication",
                                             "Free",
                                             "Stage",
                                             "Bubble",
                                             "Communication(Not Overlapped and Exclude Receive)",
                                             "Preparing"};
  return c;
}

absl::StatusOr<std::vector<std::string>> WriteAscendProfilerFiles(const std::string& dir,
                                                                 const std::vector<ProfiledStep>& steps,
                                                                 bool training) {
  if (steps.empty() || steps.front().ranks.empty()) return absl::FailedPreconditionError("no profile to write");
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) != 0) std::snprintf(host, sizeof host, "localhost");
  const std::string stamp = Timestamp();
  const int world = static_cast<int>(steps.front().ranks.size());
  std::vector<std::string> folders;
  for (int rank = 0; rank < world; ++rank) {
    std::vector<const npu::v1::Profile*> mine;
    std::vector<int64_t> ids;
    for (const ProfiledStep& s : steps) {
      if (rank >= static_cast<int>(s.ranks.size())) continue;
      mine.push_back(&s.ranks[rank]);
      ids.push_back(s.step);
    }
    const fs::path folder = fs::path(dir) / absl::StrCat(host, "_", getpid(), "_rank", rank, "_", stamp, "_ascend_pt");
    const fs::path out = folder / "ASCEND_PROFILER_OUTPUT";
    std::error_code ec;
    fs::create_directories(out, ec);
    if (ec) return absl::PermissionDeniedError(absl::StrCat("cannot create ", out.string(), ": ", ec.message()));
    Struct info;
    (*info.mutable_fields())["rank_id"] = JsonNumber(rank);
    (*info.mutable_fields())["device"] = JsonText(mine.front()->device());
    (*info.mutable_fields())["preset"] = JsonText(mine.front()->preset());
    (*info.mutable_fields())["profiler"] = JsonText("npuserve (modeled device timeline)");
    if (auto s = WriteJson(folder / absl::StrCat("profiler_info_", rank, ".json"), info); !s.ok()) return s;

    std::map<std::pair<std::string, std::string>, OpTimes> stats;
    if (auto s = WriteFile(out / "kernel_details.csv", KernelDetails(mine, ids, stats)); !s.ok()) return s;
    if (auto s = WriteFile(out / "op_statistic.csv", OpStatistic(MsprofDeviceId(mine.front()->device()), stats)); !s.ok()) {
      return s;
    }
    if (auto s = WriteOpSummaryCsvFile(*mine.back(), (out / "op_summary.csv").string()); !s.ok()) return s;
    if (auto s = WriteChromeTraceFile(*mine.back(), (out / "trace_view.json").string()); !s.ok()) return s;
    if (training) {
      std::string csv = CsvLine(StepTraceTimeColumns());
      for (size_t s = 0; s < mine.size(); ++s) csv += CsvLine(StepTrace(ids[s], *mine[s]));
      if (auto s = WriteFile(out / "step_trace_time.csv", csv); !s.ok()) return s;
      Struct comm, matrix;
      Communication(mine, ids, rank, world, comm, matrix);
      if (auto s = WriteJson(out / "communication.json", comm); !s.ok()) return s;
      if (auto s = WriteJson(out / "communication_matrix.json", matrix); !s.ok()) return s;
    }
    folders.push_back(folder.string());
  }
  return folders;
}

}  // namespace npu::client::cli
