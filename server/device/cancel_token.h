// Why a run's caller gave up, pushed by whoever learns it first (gRPC telling
// that a client cancelled or a deadline passed, a shutdown)
// and read by the device: a queued run is dropped at once, a running one stops
// at its next node or tile. Nothing polls.
//
// Thread-safe. The hook lets the executor drop a queued job the moment the
// token fires; ClearHook waits for a hook that is running, so once it returns
// the hook's owner may go away.
#pragma once

#include <atomic>
#include <functional>

#include "absl/base/thread_annotations.h"
#include "base/mutex.h"
#include "absl/status/status.h"

namespace npu::device {

class CancelToken {
 public:
  // The first call wins (its reason is kept); later calls do nothing. Runs the
  // hook, if one is set, on the calling thread.
  void Cancel(absl::Status reason);

  bool cancelled() const { return flag_.load(std::memory_order_acquire); }
  // What kernels read between tiles (RunContext::cancel).
  const std::atomic<bool>* flag() const { return &flag_; }
  // OK until cancelled; then the reason given to Cancel.
  absl::Status reason() const;

  // Sets the hook Cancel will run. False, and no hook set, when the token has
  // already fired.
  bool SetHook(std::function<void()> hook);
  // Removes the hook; if Cancel is running it right now, waits for it to end.
  void ClearHook();

 private:
  std::atomic<bool> flag_{false};
  mutable Mutex mu_;
  CondVar hook_done_;
  absl::Status reason_ ABSL_GUARDED_BY(mu_);
  std::function<void()> hook_ ABSL_GUARDED_BY(mu_);
  bool hook_running_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace npu::device
