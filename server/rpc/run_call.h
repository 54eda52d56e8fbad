// One Run call, on gRPC's asynchronous API: from the request to Finish. It
// keeps what the call needs alive (its request and response, its log line, its
// in-flight count for the drain, its cancel token) and deletes itself when gRPC
// has both finished the call and reported it done.
//
// Why not the callback API: in gRPC 1.51 a callback-API unary call costs about
// 15-25 us more than a synchronous one on these machines (npu-bench service
// measures a callback echo beside the plain one), more than a small run itself.
// The asynchronous API gives the push we need — AsyncNotifyWhenDone reports a
// cancelled call or a passed deadline at once, and the token fires — on our own
// completion-queue threads, as fast as the synchronous API.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/server_context.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/async_unary_call.h>

#include "npu/v1/runtime.grpc.pb.h"
#include "server/device/cancel_token.h"
#include "server/graph/runner.h"
#include "server/rpc/request_log.h"
#include "server/rpc/run_binding.h"
#include "server/rpc/server_state.h"

namespace npu::rpc {

// Raw: the call parses its own request, so a request that does not parse gets
// INVALID_ARGUMENT naming the field (gRPC would answer INTERNAL by itself).
using RunAsyncService = v1::RuntimeService::WithRawMethod_Run<v1::RuntimeService::Service>;

class RunCall;

// The Run calls' completion queue and its threads. Start() primes the queue
// with calls waiting for requests; Stop(), after the server's Shutdown, waits
// until no call can start another operation on the queue, then shuts it down
// and joins the threads.
class RunCallQueue {
 public:
  RunCallQueue(ServerState& state, RunAsyncService& service, std::unique_ptr<grpc::ServerCompletionQueue> cq)
      : state_(state), service_(service), cq_(std::move(cq)) {}
  ~RunCallQueue() { Stop(); }
  void Start(int threads);
  void Stop();

 private:
  friend class RunCall;
  ServerState& state_;
  RunAsyncService& service_;
  std::unique_ptr<grpc::ServerCompletionQueue> cq_;
  std::vector<std::thread> threads_;
  // Calls waiting for a request, and calls accepted that have not sent their
  // status: while either is non-zero an operation may still start on cq_.
  std::atomic<int64_t> awaiting_{0};
  std::atomic<int64_t> open_{0};
  bool stopped_ = false;
};

// What the queue's threads get back: a call and what happened to it.
struct RunCallTag {
  RunCall* call;
  void (RunCall::*on_event)(bool ok);
  void Fire(bool ok) { (call->*on_event)(ok); }
};

class RunCall {
 public:
  // Asks gRPC for the next Run call; the call object lives from here.
  static void Await(RunCallQueue& queue);

 private:
  explicit RunCall(RunCallQueue& queue);

  void OnRequest(bool ok);   // a call arrived (ok) or the server shuts down
  void OnFinished(bool ok);  // the status went out
  void OnDone(bool ok);      // the call is over: finished, cancelled or past its deadline
  void MaybeDelete();

  absl::Status Parse();
  absl::Status Submit();
  absl::Status Respond(absl::StatusOr<graph::ExecResult> result);
  // Logs, counts, and sends the status.
  void Complete(absl::Status status);

  RunCallQueue& queue_;
  ServerState& state_;
  grpc::ServerContext ctx_;
  grpc::ByteBuffer request_bytes_;
  v1::RunRequest req_;
  v1::RunResponse resp_;
  grpc::ServerAsyncResponseWriter<grpc::ByteBuffer> writer_{&ctx_};
  RunCallTag request_tag_{this, &RunCall::OnRequest};
  RunCallTag finish_tag_{this, &RunCall::OnFinished};
  RunCallTag done_tag_{this, &RunCall::OnDone};
  // The finish and done events must both have come back before the object goes.
  std::atomic<int> pending_events_{2};

  std::unique_ptr<RequestLog> log_;
  const std::shared_ptr<device::CancelToken> cancel_ = std::make_shared<device::CancelToken>();
  std::string tenant_;
  bool admitted_ = false;  // counted in runs_total
  device::Device* device_ = nullptr;
  std::shared_ptr<const graph::Plan> plan_;
  RunBinding binding_;
};

}  // namespace npu::rpc
