// One Run call, on gRPC's asynchronous API: from the request to Finish. It
// keeps what the call needs alive (its request and response, its log line, its
// in-flight count for the drain, its cancel token) and deletes itself when gRPC
// has both finished the call and reported it done (async_call_queue.h: why
// not the callback API).
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include <grpcpp/server_context.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/async_unary_call.h>

#include "npu/v1/runtime.grpc.pb.h"
#include "server/device/cancel_token.h"
#include "server/core/serve.h"
#include "server/rpc/async_call_queue.h"
#include "server/core/request_log.h"
#include "server/core/server_state.h"

namespace npu::rpc {

// Raw: the call parses its own request, so a request that does not parse gets
// INVALID_ARGUMENT naming the field (gRPC would answer INTERNAL by itself).
using RunAsyncService = v1::RuntimeService::WithRawMethod_Run<v1::RuntimeService::Service>;

class RunCall {
 public:
  // Asks gRPC for the next Run call; the call object lives from here.
  static void Await(AsyncCallQueue& queue, RunAsyncService& service, core::ServerState& state);

 private:
  RunCall(AsyncCallQueue& queue, RunAsyncService& service, core::ServerState& state);

  void OnRequest(bool ok);   // a call arrived (ok) or the server shuts down
  void OnFinished(bool ok);  // the status went out
  void OnDone(bool ok);      // the call is over: finished, cancelled or past its deadline
  void MaybeDelete();

  // The request as the core takes it (core/request.h).
  absl::StatusOr<core::Request> Translate();
  absl::Status Respond(absl::StatusOr<core::Response> result);
  // Logs and sends the status.
  void Complete(absl::Status status);

  AsyncCallQueue& queue_;
  RunAsyncService& service_;
  core::ServerState& state_;
  grpc::ServerContext ctx_;
  grpc::ByteBuffer request_bytes_;
  v1::RunRequest req_;
  v1::RunResponse resp_;
  grpc::ServerAsyncResponseWriter<grpc::ByteBuffer> writer_{&ctx_};
  CallEvent<RunCall> request_tag_{this, &RunCall::OnRequest};
  CallEvent<RunCall> finish_tag_{this, &RunCall::OnFinished};
  CallEvent<RunCall> done_tag_{this, &RunCall::OnDone};
  // The finish and done events must both have come back before the object goes.
  std::atomic<int> pending_events_{2};

  std::unique_ptr<core::RequestLog> log_;
  const std::shared_ptr<device::CancelToken> cancel_ = std::make_shared<device::CancelToken>();
};

}  // namespace npu::rpc
