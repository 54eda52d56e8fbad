// Pushes the end of a synchronous call (its client cancelled it, or its
// deadline passed) into a CancelToken, so that the device work a synchronous
// handler waits for stops (TrainingService's Step and Evaluate): gRPC's sync
// API tells a handler only through ServerContext::IsCancelled(), which is
// thread-safe, so one thread checks every watched call each kPollPeriod and
// fires a call's deadline when it comes. The Run path needs none of this: it
// is on the asynchronous API, whose AsyncNotifyWhenDone pushes the same.
#pragma once

#include <chrono>
#include <list>
#include <memory>
#include <string>
#include <thread>

#include <grpcpp/server_context.h>

#include "absl/base/thread_annotations.h"
#include "base/mutex.h"
#include "server/device/cancel_token.h"

namespace npu::rpc {

class CallWatcher {
 public:
  static constexpr std::chrono::milliseconds kPollPeriod{2};

  CallWatcher() = default;
  ~CallWatcher();  // stops its thread; every Watch must be gone by then
  CallWatcher(const CallWatcher&) = delete;
  CallWatcher& operator=(const CallWatcher&) = delete;

 private:
  struct Call {
    const grpc::ServerContext* ctx;
    std::chrono::system_clock::time_point deadline;
    std::shared_ptr<device::CancelToken> token;
    std::string what;  // "the step": named in the reason
    bool fired = false;
  };

 public:
  // While it lives, `ctx`'s call ending early fires `token`, with
  // DEADLINE_EXCEEDED or CANCELLED saying that `what` was stopped.
  class Watch {
   public:
    ~Watch();
    Watch(const Watch&) = delete;
    Watch& operator=(const Watch&) = delete;

   private:
    friend class CallWatcher;
    Watch(CallWatcher& watcher, std::list<Call>::iterator call) : watcher_(watcher), call_(call) {}
    CallWatcher& watcher_;
    const std::list<Call>::iterator call_;
  };
  std::unique_ptr<Watch> Start(const grpc::ServerContext& ctx, std::shared_ptr<device::CancelToken> token,
                               std::string what);

 private:
  void Loop();

  Mutex mu_;
  CondVar changed_;
  std::list<Call> calls_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_ ABSL_GUARDED_BY(mu_);  // started with the first watch
};

}  // namespace npu::rpc
