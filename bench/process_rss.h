// Resident memory of a process, from /proc/PID/status (VmRSS), in KiB; -1 if
// the process is gone or the field is missing.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>

namespace npu::bench {

inline int64_t RssKiB(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string key;
  while (in >> key) {
    if (key == "VmRSS:") {
      int64_t kib = 0;
      in >> kib;
      return kib;
    }
    std::getline(in, key);
  }
  return -1;
}

}  // namespace npu::bench
