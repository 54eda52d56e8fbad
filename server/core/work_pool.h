// Threads for the calls that wait (a training step waiting for its devices,
// a model being imported and planned), so that the threads serving calls
// never block: a call hands its work here and returns to its queue. Threads
// start as work arrives, up to `max_threads`, and then wait for more; work
// beyond them waits in line. Destruction runs what is queued, then joins.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "base/mutex.h"

namespace npu::core {

class WorkPool {
 public:
  explicit WorkPool(size_t max_threads) : max_threads_(max_threads < 1 ? 1 : max_threads) {}
  ~WorkPool();
  WorkPool(const WorkPool&) = delete;
  WorkPool& operator=(const WorkPool&) = delete;

  void Run(std::function<void()> work);

 private:
  void Loop();

  const size_t max_threads_;
  Mutex mu_;
  CondVar more_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  size_t idle_ ABSL_GUARDED_BY(mu_) = 0;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_ ABSL_GUARDED_BY(mu_);
};

}  // namespace npu::core
