#include "server/core/memory_returner.h"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace npu::core {
namespace {

// Resident bytes of this process (/proc/self/statm, second field, in pages).
int64_t ResidentBytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return -1;
  long long size = 0, resident = 0;
  const int n = std::fscanf(f, "%lld %lld", &size, &resident);
  std::fclose(f);
  return n == 2 ? resident * sysconf(_SC_PAGESIZE) : -1;
}

// Bytes the heap has handed out and not had back (small chunks and mmapped ones).
int64_t HeapInUse() {
  const struct mallinfo2 m = mallinfo2();
  return static_cast<int64_t>(m.uordblks + m.hblkhd);
}

// Resident bytes not in the heap's use: code, stacks and the like, plus freed
// heap pages glibc kept. -1 when /proc cannot be read.
int64_t IdleBytes() {
  const int64_t resident = ResidentBytes();
  return resident < 0 ? -1 : std::max<int64_t>(resident - HeapInUse(), 0);
}

}  // namespace

MemoryReturner::MemoryReturner(std::chrono::milliseconds period, uint64_t threshold_bytes,
                               std::function<void()> release_caches)
    : period_(period),
      threshold_(threshold_bytes),
      release_caches_(std::move(release_caches)),
      baseline_(IdleBytes()),
      watcher_([this] { Watch(); }) {}

MemoryReturner::~MemoryReturner() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
  }
  cv_.SignalAll();
  watcher_.join();
}

void MemoryReturner::Check() {
  MutexLock lock(&mu_);
  CheckLocked();
}

void MemoryReturner::CheckLocked() {
  if (release_caches_) release_caches_();
  const int64_t idle = IdleBytes();
  if (idle < 0) return;
  if (baseline_ < 0 || idle < baseline_) {
    baseline_ = idle;
    return;
  }
  if (idle - baseline_ < static_cast<int64_t>(threshold_)) return;
  malloc_trim(0);
  trims_.fetch_add(1);
  // What a trim cannot return (partly used pages) becomes the new baseline, so
  // fragmentation is not trimmed again and again.
  baseline_ = IdleBytes();
}

void MemoryReturner::Watch() {
  MutexLock lock(&mu_);
  while (!stop_) {
    cv_.WaitFor(&mu_, period_);
    if (stop_) break;
    CheckLocked();
  }
}

}  // namespace npu::core
