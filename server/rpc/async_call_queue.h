// The server's completion queue for the calls it serves on gRPC's asynchronous
// API (npu.v1 Run, KServe ModelInfer), and the threads that serve it.
//
// Why not the callback API: in gRPC 1.51 a callback-API unary call costs about
// 15-25 us more than a synchronous one on these machines (npu-bench service
// measures a callback echo beside the plain one), more than a small run itself.
// The asynchronous API gives the push we need — AsyncNotifyWhenDone reports a
// cancelled call or a passed deadline at once, and the token fires — on our own
// completion-queue threads, as fast as the synchronous API.
//
// Each call type asks gRPC for its next call (an "awaiter"); Start primes the
// queue with a few waiting calls of each type per thread. Stop(), after the
// server's Shutdown, waits until no call can start another operation on the
// queue, then shuts it down and joins the threads.
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

namespace npu::rpc {

class AsyncCallQueue {
 public:
  explicit AsyncCallQueue(std::unique_ptr<grpc::ServerCompletionQueue> cq) : cq_(std::move(cq)) {}
  ~AsyncCallQueue() { Stop(); }
  // Each awaiter asks gRPC for one call of its method on cq().
  void Start(int threads, const std::vector<std::function<void()>>& awaiters);
  void Stop();

  grpc::ServerCompletionQueue* cq() const { return cq_.get(); }

  // The calls' bookkeeping, which Stop waits on: a call waiting for a request
  // (Awaiting, then Accepted or Refused), and one accepted that has not sent
  // its status (Accepted, then Closed once Finish is called).
  void Awaiting() { awaiting_.fetch_add(1); }
  void Refused() { awaiting_.fetch_sub(1); }
  // Opens the call before its waiting ends, so Stop never sees both at zero early.
  void Accepted(const std::function<void()>& await_next) {
    open_.fetch_add(1);
    await_next();
    awaiting_.fetch_sub(1);
  }
  void Closed() { open_.fetch_sub(1); }

 private:
  std::unique_ptr<grpc::ServerCompletionQueue> cq_;
  std::vector<std::thread> threads_;
  std::atomic<int64_t> awaiting_{0};
  std::atomic<int64_t> open_{0};
  bool stopped_ = false;
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
