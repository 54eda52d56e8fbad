// What --version prints, the same for every binary: the project version from
// CMake, the build type and the git commit the binary was built from.
#pragma once

#include <string>
#include <string_view>

namespace npu {

std::string_view ProjectVersion();  // "0.1.0"
std::string_view BuildType();       // "Release", "Debug", ...
std::string_view GitCommit();       // 12 hex digits, "-dirty" appended for local edits; "" outside git

// "npu-server 0.1.0 (Release build, git 7f15698ed807)".
inline std::string VersionLine(std::string_view program) {
  std::string line(program);
  line.append(" ").append(ProjectVersion()).append(" (").append(BuildType()).append(" build");
  if (!GitCommit().empty()) line.append(", git ").append(GitCommit());
  line.append(")");
  return line;
}

}  // namespace npu
