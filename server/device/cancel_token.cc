#include "server/device/cancel_token.h"

#include <utility>

namespace npu::device {

void CancelToken::Cancel(absl::Status reason) {
  if (reason.ok()) reason = absl::CancelledError("the run was cancelled");
  std::function<void()> hook;
  {
    MutexLock lock(&mu_);
    if (flag_.load(std::memory_order_relaxed)) return;
    reason_ = std::move(reason);
    flag_.store(true, std::memory_order_release);
    hook = std::move(hook_);
    hook_ = nullptr;
    hook_running_ = static_cast<bool>(hook);
  }
  if (!hook) return;
  hook();
  {
    MutexLock lock(&mu_);
    hook_running_ = false;
  }
  hook_done_.SignalAll();
}

absl::Status CancelToken::reason() const {
  MutexLock lock(&mu_);
  return reason_;
}

bool CancelToken::SetHook(std::function<void()> hook) {
  MutexLock lock(&mu_);
  if (flag_.load(std::memory_order_relaxed)) return false;
  hook_ = std::move(hook);
  return true;
}

void CancelToken::ClearHook() {
  MutexLock lock(&mu_);
  hook_ = nullptr;
  while (hook_running_) hook_done_.Wait(&mu_);
}

}  // namespace npu::device
