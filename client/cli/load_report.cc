#include "client/cli/load_report.h"

#include <cmath>
#include <functional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/cli/cli_status.h"

namespace npu::client::cli {
namespace {

struct Column {
  const char* name;   // CSV and JSON
  const char* title;  // table
  std::function<double(const LoadStep&)> value;
  int decimals;
};

double StableValue(const LoadStep& s) { return s.stable ? (*s.stable ? 1 : 0) : std::nan(""); }

const std::vector<Column>& Columns() {
  static const std::vector<Column> columns = {
      {"concurrency", "conc", [](const LoadStep& s) { return s.concurrency; }, 0},
      {"rate", "rate/s", [](const LoadStep& s) { return s.rate; }, 1},
      {"ok", "ok", [](const LoadStep& s) { return static_cast<double>(s.ok); }, 0},
      {"errors", "errors", [](const LoadStep& s) { return static_cast<double>(s.errors); }, 0},
      {"elapsed_s", "seconds", [](const LoadStep& s) { return s.elapsed_s; }, 3},
      {"throughput", "req/s", [](const LoadStep& s) { return s.throughput; }, 1},
      {"mean_ms", "mean ms", [](const LoadStep& s) { return s.mean_ms; }, 3},
      {"p50_ms", "p50 ms", [](const LoadStep& s) { return s.p50_ms; }, 3},
      {"p90_ms", "p90 ms", [](const LoadStep& s) { return s.p90_ms; }, 3},
      {"p95_ms", "p95 ms", [](const LoadStep& s) { return s.p95_ms; }, 3},
      {"p99_ms", "p99 ms", [](const LoadStep& s) { return s.p99_ms; }, 3},
      {"max_ms", "max ms", [](const LoadStep& s) { return s.max_ms; }, 3},
      {"server_compute_ms", "server ms", [](const LoadStep& s) { return s.server_compute_ms; }, 3},
      {"device_queue_us", "dev queue us", [](const LoadStep& s) { return s.device_queue_us; }, 3},
      {"device_compute_us", "dev us", [](const LoadStep& s) { return s.device_compute_us; }, 3},
      {"mean_batch", "exec batch", [](const LoadStep& s) { return s.mean_batch; }, 2},
      {"windows", "windows", [](const LoadStep& s) { return s.windows; }, 0},
      {"stable", "stable", StableValue, 0},
  };
  return columns;
}

std::string Number(double v, int decimals, const char* not_measured) {
  if (std::isnan(v)) return not_measured;
  return absl::StrFormat("%.*f", decimals, v);
}

std::string TableCell(const Column& c, const LoadStep& s) {
  const std::string name = c.name;
  if (name == "rate" && s.rate == 0) return "max";
  if (name == "stable") return s.stable ? (*s.stable ? "yes" : "no") : "-";
  return Number(c.value(s), c.decimals, "-");
}

}  // namespace

absl::Status LoadReportWriter::CheckFormat(const std::string& format) {
  if (format == "table" || format == "csv" || format == "json") return absl::OkStatus();
  return UsageError(
      absl::InvalidArgumentError(absl::StrCat("--format \"", format, "\" is not one of table, json, csv")));
}

LoadReportWriter::LoadReportWriter(std::string format, std::ostream& out, std::ostream& notes)
    : format_(std::move(format)), out_(out), notes_(notes) {}

void LoadReportWriter::Write(const LoadStep& step) {
  const std::vector<Column>& columns = Columns();
  std::vector<std::string> cells;
  if (format_ == "table") {
    // Fixed widths, so rows printed one at a time still line up.
    auto width = [](const Column& c) { return std::max<int>(9, static_cast<int>(std::string(c.title).size())); };
    if (!header_written_) {
      for (const Column& c : columns) cells.push_back(absl::StrFormat("%*s", width(c), c.title));
      out_ << absl::StrJoin(cells, " ") << "\n";
      cells.clear();
    }
    for (const Column& c : columns) cells.push_back(absl::StrFormat("%*s", width(c), TableCell(c, step)));
    out_ << absl::StrJoin(cells, " ") << "\n";
  } else if (format_ == "csv") {
    if (!header_written_) {
      for (const Column& c : columns) cells.push_back(c.name);
      out_ << absl::StrJoin(cells, ",") << "\n";
      cells.clear();
    }
    for (const Column& c : columns) cells.push_back(Number(c.value(step), c.decimals, "nan"));
    out_ << absl::StrJoin(cells, ",") << "\n";
  } else {
    for (const Column& c : columns) {
      cells.push_back(absl::StrCat("\"", c.name, "\": ", Number(c.value(step), c.decimals, "null")));
    }
    std::vector<std::string> codes;
    for (const auto& [code, n] : step.errors_by_code) codes.push_back(absl::StrFormat("\"%s\": %d", code, n));
    cells.push_back(absl::StrCat("\"error_codes\": {", absl::StrJoin(codes, ", "), "}"));
    std::vector<std::string> sizes;
    for (const auto& [size, n] : step.batch_sizes) sizes.push_back(absl::StrFormat("\"%d\": %d", size, n));
    cells.push_back(absl::StrCat("\"batch_sizes\": {", absl::StrJoin(sizes, ", "), "}"));
    out_ << "{" << absl::StrJoin(cells, ", ") << "}\n";
  }
  header_written_ = true;
  out_.flush();

  const std::string where = absl::StrCat("npu load: concurrency ", step.concurrency,
                                         step.rate > 0 ? absl::StrFormat(" at %g/s", step.rate) : "");
  if (step.errors > 0) {
    notes_ << where << ": " << step.errors << " failed requests\n";
    for (const auto& [code, n] : step.errors_by_code) {
      auto message = step.first_error_message.find(code);
      notes_ << "  " << n << " x " << code
             << (message != step.first_error_message.end() ? absl::StrCat(", the first: ", message->second) : "")
             << "\n";
    }
  }
  if (!step.batch_sizes.empty() && format_ == "table") {
    // The executed batch sizes: how many requests ran in a device run of each size.
    std::vector<std::string> sizes;
    for (const auto& [size, n] : step.batch_sizes) sizes.push_back(absl::StrFormat("%d:%d", size, n));
    notes_ << where << ": executed batch sizes (size:requests) " << absl::StrJoin(sizes, " ")
           << absl::StrFormat(", mean %.2f\n", step.mean_batch);
  }
  if (step.stopped_by_duration) {
    notes_ << where << ": --duration ended the step after " << step.windows
           << " complete windows; the row covers what was measured\n";
  }
  if (step.stable.has_value() && !*step.stable && !step.stopped_by_duration) {
    notes_ << where << ": not stable: the last windows' throughput or latency differ by more than "
           << "--stability-percentage\n";
  }
  notes_.flush();
}

}  // namespace npu::client::cli
