// Test data made by a Python script (torch or ONNX references): generated once
// per build directory, and again whenever the script changes.
#pragma once

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace npu::testing {

// Runs `NPU_PYTHON script out_dir` unless out_dir already holds the output of
// this version of the script and of the modules it imports (`deps`): their
// mtimes and sizes, kept in stamp.txt. Returns out_dir, or an empty path when
// the script failed (its stderr is left visible).
// Test processes that ctest runs side by side share out_dir: one generates
// (under a file lock, into a fresh folder renamed into place) while the
// others wait, so none reads a half-written folder.
inline std::filesystem::path GeneratedDir(const std::filesystem::path& script, const std::filesystem::path& out_dir,
                                          const std::vector<std::filesystem::path>& deps = {}) {
  auto version = [](const std::filesystem::path& file) {
    struct stat st {};
    stat(file.c_str(), &st);
    return std::to_string(st.st_mtime) + " " + std::to_string(st.st_size);
  };
  std::string stamp = version(script);
  for (const std::filesystem::path& file : deps) stamp.append(" ").append(version(file));
  std::filesystem::create_directories(out_dir.parent_path());
  const std::string lock_path = out_dir.string() + ".lock";
  const int lock = open(lock_path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  if (lock >= 0) flock(lock, LOCK_EX);
  std::string seen;
  std::getline(std::ifstream(out_dir / "stamp.txt") >> std::ws, seen);
  std::filesystem::path result = out_dir;
  if (seen != stamp) {
    const std::filesystem::path fresh = out_dir.string() + ".new";
    std::filesystem::remove_all(fresh);
    std::filesystem::create_directories(fresh);
    const std::string cmd = std::string(NPU_PYTHON) + " " + script.string() + " " + fresh.string() + " >/dev/null";
    if (std::system(cmd.c_str()) != 0) {
      result.clear();
    } else {
      std::ofstream(fresh / "stamp.txt") << stamp << "\n";
      std::filesystem::remove_all(out_dir);
      std::filesystem::rename(fresh, out_dir);
    }
  }
  if (lock >= 0) close(lock);  // releases the lock
  return result;
}

}  // namespace npu::testing
