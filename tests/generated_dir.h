// Test data made by a Python script (torch or ONNX references): generated once
// per build directory, and again whenever the script changes.
#pragma once

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace npu::testing {

// Runs `NPU_PYTHON script out_dir` unless out_dir already holds the output of
// this version of the script (its mtime and size, kept in stamp.txt). Returns
// out_dir, or an empty path when the script failed (its stderr is left visible).
inline std::filesystem::path GeneratedDir(const std::filesystem::path& script, const std::filesystem::path& out_dir) {
  struct stat st {};
  stat(script.c_str(), &st);
  const std::string stamp = std::to_string(st.st_mtime) + " " + std::to_string(st.st_size);
  std::string seen;
  std::getline(std::ifstream(out_dir / "stamp.txt") >> std::ws, seen);
  if (seen != stamp) {
    std::filesystem::remove_all(out_dir);
    std::filesystem::create_directories(out_dir);
    const std::string cmd = std::string(NPU_PYTHON) + " " + script.string() + " " + out_dir.string() + " >/dev/null";
    if (std::system(cmd.c_str()) != 0) return {};
    std::ofstream(out_dir / "stamp.txt") << stamp << "\n";
  }
  return out_dir;
}

}  // namespace npu::testing
