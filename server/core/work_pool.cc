#include "server/core/work_pool.h"

#include <utility>

namespace npu::core {

WorkPool::~WorkPool() {
  std::vector<std::thread> threads;
  {
    MutexLock lock(&mu_);
    stop_ = true;
    threads = std::move(threads_);
  }
  more_.SignalAll();
  for (std::thread& t : threads) t.join();
}

void WorkPool::Run(std::function<void()> work) {
  MutexLock lock(&mu_);
  queue_.push_back(std::move(work));
  // Idle threads that were signalled but have not woken yet still count as
  // idle: a thread starts when the work waiting outnumbers them.
  if (queue_.size() > idle_ && threads_.size() < max_threads_) {
    threads_.emplace_back([this] { Loop(); });
  } else {
    more_.Signal();
  }
}

void WorkPool::Loop() {
  mu_.Lock();
  while (true) {
    while (queue_.empty() && !stop_) {
      ++idle_;
      more_.Wait(&mu_);
      --idle_;
    }
    if (queue_.empty()) break;  // stopping, and nothing left
    std::function<void()> work = std::move(queue_.front());
    queue_.pop_front();
    mu_.Unlock();
    work();
    work = nullptr;  // what it captured goes before the lock is taken again
    mu_.Lock();
  }
  mu_.Unlock();
}

}  // namespace npu::core
