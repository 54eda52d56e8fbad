// A plain-text table with aligned columns, for terminal output.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace npu::client::cli {

class TextTable {
 public:
  enum class Align { kLeft, kRight };

  // One header per column; columns whose alignment is not given are left-aligned.
  explicit TextTable(std::vector<std::string> headers, std::vector<Align> aligns = {});

  // Short rows are padded with empty cells.
  void AddRow(std::vector<std::string> cells);
  void Print(std::ostream& out) const;

 private:
  std::vector<std::string> headers_;
  std::vector<Align> aligns_;
  std::vector<std::vector<std::string>> rows_;
};

// "512 B", "64.0 KiB", "31.5 GiB".
std::string FormatBytes(uint64_t bytes);

}  // namespace npu::client::cli
