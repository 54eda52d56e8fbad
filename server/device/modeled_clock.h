// A device's modeled clock as clients see it: where in modeled time a run
// arrives. Runs execute one at a time on the host, but a run submitted while
// another executes arrives where that one has got (its last task issue), not
// where it will end, so in modeled time the two overlap and share the cores,
// bandwidth and issue slots (core_pool.h). When no run executes, a run
// arrives where the last one ended. Thread-safe: clients submit from any
// thread while the running job advances the clock.
#pragma once

#include <cstdint>
#include <set>

#include "base/mutex.h"

namespace npu::device {

class ModeledClock {
 public:
  // A run is submitted: returns its arrival cycle. It counts as waiting until
  // Start or Drop is called with that arrival.
  uint64_t Submit();
  // A submitted run dropped before it started (cancelled, refused).
  void Drop(uint64_t arrival);
  // The run that arrived at `arrival` starts executing.
  void Start(uint64_t arrival);
  // The running run issued a task at `cycle`. Returns the earliest cycle at
  // which any run still to come can issue a task: the least of the frontier
  // and the arrivals of the runs waiting.
  uint64_t Issued(uint64_t cycle);
  // The running run ended; every core is free after `horizon`.
  void Finish(uint64_t horizon);

 private:
  uint64_t EarliestToComeLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable Mutex mu_;
  bool running_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t frontier_ ABSL_GUARDED_BY(mu_) = 0;   // the running run's last issue (its arrival before any)
  uint64_t completed_ ABSL_GUARDED_BY(mu_) = 0;  // where the runs that ended left the cores
  std::multiset<uint64_t> waiting_ ABSL_GUARDED_BY(mu_);  // arrivals of runs submitted, not started
};

}  // namespace npu::device
