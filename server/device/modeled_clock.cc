#include "server/device/modeled_clock.h"

#include <algorithm>

namespace npu::device {

uint64_t ModeledClock::Submit() {
  MutexLock lock(&mu_);
  const uint64_t arrival = running_ ? std::max(frontier_, completed_) : completed_;
  waiting_.insert(arrival);
  return arrival;
}

void ModeledClock::Drop(uint64_t arrival) {
  MutexLock lock(&mu_);
  if (auto it = waiting_.find(arrival); it != waiting_.end()) waiting_.erase(it);
}

void ModeledClock::Start(uint64_t arrival) {
  MutexLock lock(&mu_);
  if (auto it = waiting_.find(arrival); it != waiting_.end()) waiting_.erase(it);
  running_ = true;
  frontier_ = arrival;
}

uint64_t ModeledClock::Issued(uint64_t cycle) {
  MutexLock lock(&mu_);
  frontier_ = std::max(frontier_, cycle);
  return EarliestToComeLocked();
}

void ModeledClock::Finish(uint64_t horizon) {
  MutexLock lock(&mu_);
  running_ = false;
  completed_ = std::max(completed_, horizon);
}

uint64_t ModeledClock::EarliestToComeLocked() const {
  return waiting_.empty() ? frontier_ : std::min(frontier_, *waiting_.begin());
}

}  // namespace npu::device
