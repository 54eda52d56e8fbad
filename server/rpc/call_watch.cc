#include "server/rpc/call_watch.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace npu::rpc {

CallWatcher::~CallWatcher() {
  std::thread thread;
  {
    MutexLock lock(&mu_);
    stop_ = true;
    thread = std::move(thread_);
  }
  changed_.SignalAll();
  if (thread.joinable()) thread.join();
}

std::unique_ptr<CallWatcher::Watch> CallWatcher::Start(const grpc::ServerContext& ctx,
                                                       std::shared_ptr<device::CancelToken> token, std::string what) {
  MutexLock lock(&mu_);
  calls_.push_front(Call{&ctx, ctx.deadline(), std::move(token), std::move(what)});
  if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
  changed_.SignalAll();
  return std::unique_ptr<Watch>(new Watch(*this, calls_.begin()));
}

CallWatcher::Watch::~Watch() {
  MutexLock lock(&watcher_.mu_);
  watcher_.calls_.erase(call_);
}

void CallWatcher::Loop() {
  mu_.Lock();
  while (!stop_) {
    if (calls_.empty()) {
      changed_.Wait(&mu_);
      continue;
    }
    const auto now = std::chrono::system_clock::now();
    auto wake = now + kPollPeriod;
    std::vector<std::pair<std::shared_ptr<device::CancelToken>, absl::Status>> fire;
    for (Call& c : calls_) {
      if (c.fired) continue;
      if (now >= c.deadline) {
        fire.emplace_back(c.token, absl::DeadlineExceededError(
                                       absl::StrCat(c.what, " passed its deadline; its device work was stopped")));
      } else if (c.ctx->IsCancelled()) {
        fire.emplace_back(c.token, absl::CancelledError(
                                       absl::StrCat("the client cancelled ", c.what, "; its device work was stopped")));
      } else {
        wake = std::min(wake, c.deadline);
        continue;
      }
      c.fired = true;
    }
    if (!fire.empty()) {
      // Outside the lock: a token's hook reaches into the devices' queues.
      mu_.Unlock();
      for (auto& [token, reason] : fire) token->Cancel(std::move(reason));
      mu_.Lock();
      continue;
    }
    changed_.WaitFor(&mu_, wake - now);
  }
  mu_.Unlock();
}

}  // namespace npu::rpc
