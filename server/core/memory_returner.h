// Gives freed heap memory back to the system. glibc keeps what a process frees
// (a 100,000-node graph's protos and plan, a large request, a run's buffers) in
// its arenas, one per thread that allocated, and returns it only from the top of
// the main arena; so after a huge graph is registered, run and unregistered the
// server's RSS stayed ~190 MB up, and grew with every repeat as other handler
// threads' arenas filled. This watcher reads the process's RSS and the heap's
// bytes in use every `period`, and calls malloc_trim(0) (which returns every
// free page of every arena) when the resident memory not in use has grown by
// `threshold` over its baseline: its size at construction (make one before the
// server takes requests) or after the last trim, or the lowest seen since.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <thread>

#include "base/mutex.h"

namespace npu::core {

class MemoryReturner {
 public:
  // `release_caches` (optional) runs before each look: it gives back what the
  // server keeps for reuse once it is idle (the devices' run arenas), so the
  // trim can return it too.
  MemoryReturner(std::chrono::milliseconds period, uint64_t threshold_bytes,
                 std::function<void()> release_caches = nullptr);
  ~MemoryReturner();  // stops the watcher
  MemoryReturner(const MemoryReturner&) = delete;
  MemoryReturner& operator=(const MemoryReturner&) = delete;

  uint64_t trims() const { return trims_.load(); }
  // Freed bytes that make a trim worth it.
  uint64_t threshold_bytes() const { return threshold_; }

  // One look: trims when due. Public for tests; the watcher calls it.
  void Check();

 private:
  void Watch();
  void CheckLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::chrono::milliseconds period_;
  const uint64_t threshold_;
  const std::function<void()> release_caches_;
  std::atomic<uint64_t> trims_{0};
  Mutex mu_;
  CondVar cv_;
  // Resident bytes not in the heap's use: see the class comment.
  int64_t baseline_ ABSL_GUARDED_BY(mu_) = -1;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread watcher_;  // last: started once the members above exist
};

}  // namespace npu::core
