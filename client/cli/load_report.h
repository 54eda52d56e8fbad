// Writes `npu load`'s rows as each step finishes, flushed, so an interrupted
// sweep keeps the steps it completed. Formats:
//   table  aligned columns for a terminal (header first)
//   csv    header, then one row per step; every column a number (NaN = not measured)
//   json   one object per line (JSON Lines), the CSV's fields plus error_codes;
//          null = not measured
// Errors by code and notes (unstable windows, --duration reached) go to `notes`.
#pragma once

#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "client/cli/load_measurement.h"

namespace npu::client::cli {

class LoadReportWriter {
 public:
  // Usage error for a format other than table, csv, json.
  static absl::Status CheckFormat(const std::string& format);

  LoadReportWriter(std::string format, std::ostream& out, std::ostream& notes);
  void Write(const LoadStep& step);

 private:
  std::string format_;
  std::ostream& out_;
  std::ostream& notes_;
  bool header_written_ = false;
};

}  // namespace npu::client::cli
