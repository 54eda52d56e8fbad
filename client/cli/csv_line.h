// One CSV line (RFC 4180 quoting: a cell holding a comma, a quote or a line
// break is quoted, its quotes doubled), for the CSV files the commands write
// (op_summary.csv, compare_result.csv, the profiler's files).
#pragma once

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"

namespace npu::client::cli {

inline std::string CsvCell(const std::string& cell) {
  if (cell.find_first_of(",\"\n\r") == std::string::npos) return cell;
  return absl::StrCat("\"", absl::StrReplaceAll(cell, {{"\"", "\"\""}}), "\"");
}

// The cells quoted and joined, with the line's "\n".
inline std::string CsvLine(const std::vector<std::string>& cells) {
  std::string line;
  for (size_t i = 0; i < cells.size(); ++i) absl::StrAppend(&line, i ? "," : "", CsvCell(cells[i]));
  return line + "\n";
}

}  // namespace npu::client::cli
