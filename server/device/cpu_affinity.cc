#include "server/device/cpu_affinity.h"

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "kernels/openmp.h"

namespace npu::device {

absl::StatusOr<std::vector<int>> ParseCpuList(absl::string_view list) {
  std::vector<int> cpus;
  std::set<int> seen;
  list = absl::StripAsciiWhitespace(list);
  if (list.empty()) return cpus;
  for (absl::string_view item : absl::StrSplit(list, ',')) {
    item = absl::StripAsciiWhitespace(item);
    std::pair<absl::string_view, absl::string_view> range = absl::StrSplit(item, absl::MaxSplits('-', 1));
    int lo = 0, hi = 0;
    const bool ok = absl::SimpleAtoi(range.first, &lo) &&
                    (range.second.empty() ? (hi = lo, item.find('-') == absl::string_view::npos)
                                          : absl::SimpleAtoi(range.second, &hi));
    if (!ok || lo < 0 || hi < lo || hi >= CPU_SETSIZE) {
      return absl::InvalidArgumentError(absl::StrCat("--cpu-affinity: \"", item,
                                                     "\" is not a CPU or a range N-M (e.g. 0-1,4)"));
    }
    for (int c = lo; c <= hi; ++c) {
      if (!seen.insert(c).second) {
        return absl::InvalidArgumentError(absl::StrCat("--cpu-affinity: CPU ", c, " is listed twice"));
      }
      cpus.push_back(c);
    }
  }
  return cpus;
}

absl::Status CheckCpusAllowed(const std::vector<int>& cpus) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return absl::OkStatus();  // cannot tell: let pinning report
  for (int c : cpus) {
    if (!CPU_ISSET(c, &allowed)) {
      return absl::InvalidArgumentError(absl::StrCat("--cpu-affinity: CPU ", c, " is not available to this process (",
                                                     CPU_COUNT(&allowed), " CPUs allowed)"));
    }
  }
  return absl::OkStatus();
}

absl::Status PinOpenMpTeam(const std::vector<int>& cpus, int omp_threads) {
  if (cpus.empty()) return absl::OkStatus();
  const int team = omp_threads > 0 ? omp_threads : static_cast<int>(cpus.size());
  omp_set_num_threads(team);  // per-thread ICV of this worker
  std::atomic<int> failed_cpu{-1};
#pragma omp parallel num_threads(team)
  {
    const int cpu = cpus[static_cast<size_t>(omp_get_thread_num()) % cpus.size()];
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) failed_cpu.store(cpu);
  }
  if (failed_cpu.load() >= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--cpu-affinity: cannot pin a compute thread to CPU ", failed_cpu.load(),
                     " (not online or not allowed for this process)"));
  }
  return absl::OkStatus();
}

}  // namespace npu::device
