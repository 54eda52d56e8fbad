// The generated part of a doc: the text between "<!-- BEGIN name -->\n" and
// "<!-- END name -->" in a file of the source tree, for tests that hold it
// equal to what the code generates.
#pragma once

#include <fstream>
#include <optional>
#include <sstream>
#include <string>

namespace npu::testing {

// nullopt when the file or a marker is missing.
inline std::optional<std::string> DocSection(const std::string& path, const std::string& name) {
  std::ifstream f(path);
  if (!f) return std::nullopt;
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string doc = ss.str();
  const std::string begin = "<!-- BEGIN " + name + " -->\n", end = "<!-- END " + name + " -->";
  const size_t b = doc.find(begin), e = doc.find(end);
  if (b == std::string::npos || e == std::string::npos || e < b) return std::nullopt;
  return doc.substr(b + begin.size(), e - b - begin.size());
}

}  // namespace npu::testing
