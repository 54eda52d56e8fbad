// Every unary call the server serves, on gRPC's asynchronous API through one
// call lifecycle (gRPC's CallData pattern; async_call_queue.h says why not the
// callback API). A UnaryCall asks gRPC for a call of its method, then:
//   1. parses its own request (raw methods: a request that does not parse gets
//      INVALID_ARGUMENT naming the field, where gRPC would answer INTERNAL),
//   2. reads the caller's tenant (bearer token) and opens its log line,
//   3. hands itself to the method's handler, inline on the queue's thread or,
//      for work that waits (a training step, a model import), on the core's
//      WorkPool, so no queue thread ever blocks,
//   4. sends what the handler Finish()es, whenever that is.
// The call's deadline and its client's cancellation come from gRPC's done
// notification (AsyncNotifyWhenDone): it fires the call's CancelToken at once,
// which drops a queued run and stops a running one. Nothing polls. The call
// object goes once both its finish and its done report are back.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <grpcpp/server_context.h>
#include <grpcpp/support/async_unary_call.h>
#include <grpcpp/support/byte_buffer.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/core/request_log.h"
#include "server/core/server_state.h"
#include "server/device/cancel_token.h"
#include "server/rpc/async_call_queue.h"
#include "server/rpc/call_tenant.h"
#include "server/rpc/grpc_status.h"

namespace npu::rpc {

using RawWriter = grpc::ServerAsyncResponseWriter<grpc::ByteBuffer>;
// Asks gRPC for the next call of one method (a generated RequestX of a raw method).
using RequestNext =
    std::function<void(grpc::ServerContext*, grpc::ByteBuffer*, RawWriter*, grpc::ServerCompletionQueue*, void*)>;

enum class CallWork {
  kInline,  // the handler returns at once (it may finish later, from a run's end)
  kPool,    // the handler waits for something: it runs on the core's WorkPool
};

struct MethodInfo {
  const char* name;  // the log's and metrics' name ("Run", "inference.ModelInfer")
  const char* path;  // "/npu.v1.RuntimeService/Run": named when a request does not parse
  CallWork work = CallWork::kInline;
  bool anonymous = false;  // health probes: no tenant, no log line
  int waiting_per_thread = 1;  // calls asked of gRPC ahead (4 for the hot ones: Run, ModelInfer)
};

template <typename Req, typename Resp>
class UnaryCall;

template <typename Req, typename Resp>
using CallHandler = std::function<void(UnaryCall<Req, Resp>&)>;

// One method's calls: what they share.
template <typename Req, typename Resp>
struct UnaryMethod {
  MethodInfo info;
  RequestNext request_next;
  CallHandler<Req, Resp> handle;  // must Finish the call, now or later, exactly once
};

template <typename Req, typename Resp>
class UnaryCall {
 public:
  // Asks gRPC for the method's next call; the call object lives from here.
  static void Await(AsyncCallQueue& queue, core::ServerState& state, const UnaryMethod<Req, Resp>& method) {
    new UnaryCall(queue, state, method);
  }

  const Req& request() const { return req_; }
  Req& mutable_request() { return req_; }  // the call's own: handlers may move bytes out of it
  Resp& response() { return resp_; }
  const std::string& tenant() const { return tenant_; }
  // Fired when the client cancels or the deadline passes, with the reason.
  const std::shared_ptr<device::CancelToken>& cancel() const { return cancel_; }
  core::RequestLog& log() { return *log_; }
  core::ServerState& state() { return state_; }

  // Logs `status` and sends it, with the response when it is OK. Once called,
  // the call may be deleted by the queue's threads at any moment.
  void Finish(absl::Status status) {
    if (!status.ok()) resp_.Clear();
    grpc::Status wire = ToGrpcStatus(log_ ? log_->Finish(std::move(status)) : status);
    finished_.store(true);
    AsyncCallQueue& queue = queue_;
    FinishRawCall(writer_, resp_, wire, &finish_tag_);
    queue.Closed();
  }

 private:
  UnaryCall(AsyncCallQueue& queue, core::ServerState& state, const UnaryMethod<Req, Resp>& method)
      : queue_(queue), state_(state), method_(method) {
    queue_.Awaiting();
    ctx_.AsyncNotifyWhenDone(&done_tag_);
    method_.request_next(&ctx_, &request_bytes_, &writer_, queue_.cq(), &request_tag_);
  }

  void OnRequest(bool ok) {
    if (!ok) {  // shutting down: no call came, and none will report done
      queue_.Refused();
      delete this;
      return;
    }
    queue_.Accepted([this] { Await(queue_, state_, method_); });  // the next call, before this one's work
    if (!method_.info.anonymous) log_.emplace(method_.info.name);  // from now: the call's latency
    if (auto s = ParseRawRequest(request_bytes_, req_, method_.info.path); !s.ok()) return Finish(std::move(s));
    if (!method_.info.anonymous) {
      auto tenant = TenantOf(state_, ctx_);
      if (!tenant.ok()) return Finish(tenant.status());
      tenant_ = *std::move(tenant);
      log_->set_tenant(tenant_);
    }
    if (method_.info.work == CallWork::kPool) {
      state_.work.Run([this] { method_.handle(*this); });
    } else {
      method_.handle(*this);
    }
  }

  // The call is over: finished, or its client gave up (it cancelled, or the
  // deadline passed) before it was.
  void OnDone(bool) {
    if (!finished_.load()) {
      if (std::chrono::system_clock::now() >= ctx_.deadline()) {
        cancel_->Cancel(absl::DeadlineExceededError(
            absl::StrCat(method_.info.name, " passed its deadline; its device work was stopped")));
      } else {
        cancel_->Cancel(absl::CancelledError(
            absl::StrCat("the client cancelled ", method_.info.name, "; its device work was stopped")));
      }
    }
    MaybeDelete();
  }
  void OnFinished(bool) { MaybeDelete(); }
  void MaybeDelete() {
    if (pending_events_.fetch_sub(1) == 1) delete this;
  }

  AsyncCallQueue& queue_;
  core::ServerState& state_;
  const UnaryMethod<Req, Resp>& method_;
  grpc::ServerContext ctx_;
  grpc::ByteBuffer request_bytes_;
  Req req_;
  Resp resp_;
  RawWriter writer_{&ctx_};
  CallEvent<UnaryCall> request_tag_{this, &UnaryCall::OnRequest};
  CallEvent<UnaryCall> finish_tag_{this, &UnaryCall::OnFinished};
  CallEvent<UnaryCall> done_tag_{this, &UnaryCall::OnDone};
  // The finish and done events must both have come back before the object goes.
  std::atomic<int> pending_events_{2};
  std::atomic<bool> finished_{false};

  std::optional<core::RequestLog> log_;  // none for anonymous calls
  std::string tenant_;
  const std::shared_ptr<device::CancelToken> cancel_ = std::make_shared<device::CancelToken>();
};

// The server's unary methods, each served by UnaryCalls on one queue.
class UnaryMethods {
 public:
  // `request_next` is the generated RequestX of a raw method, on `service`.
  template <typename Req, typename Resp, typename Service, typename Base>
  void Add(Service& service,
           void (Base::*request_next)(grpc::ServerContext*, grpc::ByteBuffer*, RawWriter*, grpc::CompletionQueue*,
                                      grpc::ServerCompletionQueue*, void*),
           MethodInfo info, CallHandler<Req, Resp> handle) {
    Base& base = service;
    auto method = std::make_shared<UnaryMethod<Req, Resp>>(UnaryMethod<Req, Resp>{
        info,
        [&base, request_next](grpc::ServerContext* ctx, grpc::ByteBuffer* bytes, RawWriter* writer,
                              grpc::ServerCompletionQueue* cq, void* tag) {
          (base.*request_next)(ctx, bytes, writer, cq, cq, tag);
        },
        std::move(handle)});
    awaiters_.push_back({[method](AsyncCallQueue& queue, core::ServerState& state) {
                           UnaryCall<Req, Resp>::Await(queue, state, *method);
                         },
                         info.waiting_per_thread});
    keep_.push_back(std::move(method));
  }

  // Each method's first calls, asked of gRPC (AsyncCallQueue::Start).
  std::vector<AsyncCallQueue::Awaiter> Awaiters(AsyncCallQueue& queue, core::ServerState& state) const {
    std::vector<AsyncCallQueue::Awaiter> out;
    for (const auto& [await, per_thread] : awaiters_) {
      out.push_back({[&queue, &state, await = await] { await(queue, state); }, per_thread});
    }
    return out;
  }

 private:
  std::vector<std::pair<std::function<void(AsyncCallQueue&, core::ServerState&)>, int>> awaiters_;
  std::vector<std::shared_ptr<const void>> keep_;  // the methods, alive as long as this
};

}  // namespace npu::rpc
