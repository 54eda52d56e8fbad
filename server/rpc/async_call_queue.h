// The server's completion queue for the calls it serves on gRPC's asynchronous
// API (every unary call: unary_call.h), and the threads that serve it.
//
// Why not the callback API: in gRPC 1.51 a callback-API unary call costs about
// 15-25 us more than a synchronous one on these machines (npu-bench service
// measures a callback echo beside the plain one), more than a small run itself.
// The asynchronous API gives the push we need — AsyncNotifyWhenDone reports a
// cancelled call or a passed deadline at once, and the token fires — on our own
// completion-queue threads, as fast as the synchronous API.
//
// Each method asks gRPC for its next call (an "awaiter"); Start primes the
// queue with a few waiting calls of each method per thread. Stop(), after the
// server's Shutdown, waits (woken by each call that goes, not polling) until
// no call can start another operation on the queue, then shuts it down and
// joins the threads.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include <google/protobuf/message.h>
#include <grpcpp/server_context.h>
#include <grpcpp/support/async_unary_call.h>
#include <grpcpp/support/byte_buffer.h>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "base/mutex.h"

namespace npu::rpc {

class AsyncCallQueue {
 public:
  explicit AsyncCallQueue(std::unique_ptr<grpc::ServerCompletionQueue> cq) : cq_(std::move(cq)) {}
  ~AsyncCallQueue() { Stop(); }
  // Asks gRPC for one call of a method on cq(); `per_thread` of them wait per
  // serving thread (each accepted call asks for the next one at once).
  struct Awaiter {
    std::function<void()> await;
    int per_thread = 1;
  };
  void Start(int threads, const std::vector<Awaiter>& awaiters);
  void Stop();

  grpc::ServerCompletionQueue* cq() const { return cq_.get(); }

  // The calls' bookkeeping, which Stop waits on: a call waiting for a request
  // (Awaiting, then Accepted or Refused), and one accepted that has not sent
  // its status (Accepted, then Closed once Finish is called).
  void Awaiting() { awaiting_.fetch_add(1); }
  void Refused() {
    awaiting_.fetch_sub(1);
    Quieted();
  }
  // Opens the call before its waiting ends, so Stop never sees both at zero early.
  void Accepted(const std::function<void()>& await_next) {
    open_.fetch_add(1);
    await_next();
    awaiting_.fetch_sub(1);
  }
  void Closed() {
    open_.fetch_sub(1);
    Quieted();
  }

 private:
  void Quieted();  // a call went: wakes Stop once it is waiting

  std::unique_ptr<grpc::ServerCompletionQueue> cq_;
  std::vector<std::thread> threads_;
  std::atomic<int64_t> awaiting_{0};
  std::atomic<int64_t> open_{0};
  bool stopped_ = false;
  std::atomic<bool> stopping_{false};
  Mutex quiet_mu_;
  CondVar quiet_;
};

// What the queue's threads get back: an event of one call.
class AsyncEvent {
 public:
  virtual void Fire(bool ok) = 0;

 protected:
  ~AsyncEvent() = default;
};

template <typename Call>
class CallEvent final : public AsyncEvent {
 public:
  CallEvent(Call* call, void (Call::*on_event)(bool)) : call_(call), on_event_(on_event) {}
  void Fire(bool ok) override { (call_->*on_event_)(ok); }

 private:
  Call* const call_;
  void (Call::*const on_event_)(bool);
};

// A raw method's request: INVALID_ARGUMENT naming what protobuf could not
// parse (gRPC would answer INTERNAL by itself). Clears `bytes`.
absl::Status ParseRawRequest(grpc::ByteBuffer& bytes, google::protobuf::Message& request, absl::string_view method);

// Sends `response` with an OK `status`, or `status` alone; `tag` comes back
// when it went out.
void FinishRawCall(grpc::ServerAsyncResponseWriter<grpc::ByteBuffer>& writer,
                   const google::protobuf::Message& response, const grpc::Status& status, void* tag);

}  // namespace npu::rpc
