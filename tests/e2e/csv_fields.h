// The fields of one line of a CSV file the commands write (RFC 4180 quoting:
// shapes such as "[4, 8]" hold commas), for the tests that read them.
#pragma once

#include <string>
#include <vector>

namespace npu::testing {

inline std::vector<std::string> CsvFields(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    if (quoted && line[i] == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      fields.back() += '"';
      ++i;
    } else if (line[i] == '"') {
      quoted = !quoted;
    } else if (line[i] == ',' && !quoted) {
      fields.emplace_back();
    } else {
      fields.back() += line[i];
    }
  }
  return fields;
}

}  // namespace npu::testing
