// One KServe v2 gRPC ModelInfer call, on gRPC's asynchronous API as npu.v1 Run
// is (async_call_queue.h): it parses the request, decodes it, starts the run
// (StartInfer) and returns; the run's end encodes the response and finishes
// the call. A client that cancels or passes its deadline fires the run's
// CancelToken when gRPC reports the call done. Deletes itself once gRPC has
// both sent the status and reported the call done.
#pragma once

#include <atomic>
#include <memory>

#include <grpcpp/server_context.h>
#include <grpcpp/support/async_unary_call.h>
#include <grpcpp/support/byte_buffer.h>

#include "kserve/grpc_service.grpc.pb.h"
#include "server/device/cancel_token.h"
#include "server/rpc/async_call_queue.h"
#include "server/rpc/kserve_infer.h"
#include "server/core/request_log.h"
#include "server/core/server_state.h"

namespace npu::rpc {

// Raw: a request that does not parse gets INVALID_ARGUMENT naming the field.
using KserveAsyncService =
    inference::GRPCInferenceService::WithRawMethod_ModelInfer<inference::GRPCInferenceService::Service>;

class KserveInferCall {
 public:
  // Asks gRPC for the next ModelInfer call; the call object lives from here.
  static void Await(AsyncCallQueue& queue, KserveAsyncService& service, core::ServerState& state);

 private:
  KserveInferCall(AsyncCallQueue& queue, KserveAsyncService& service, core::ServerState& state);

  void OnRequest(bool ok);   // a call arrived (ok) or the server shuts down
  void OnFinished(bool ok);  // the status went out
  void OnDone(bool ok);      // the call is over: finished, cancelled or past its deadline
  void MaybeDelete();
  // Logs and sends the answer.
  void Complete(absl::StatusOr<InferResult> result);

  AsyncCallQueue& queue_;
  KserveAsyncService& service_;
  core::ServerState& state_;
  grpc::ServerContext ctx_;
  grpc::ByteBuffer request_bytes_;
  inference::ModelInferRequest req_;  // the run's raw inputs view its bytes
  grpc::ServerAsyncResponseWriter<grpc::ByteBuffer> writer_{&ctx_};
  CallEvent<KserveInferCall> request_tag_{this, &KserveInferCall::OnRequest};
  CallEvent<KserveInferCall> finish_tag_{this, &KserveInferCall::OnFinished};
  CallEvent<KserveInferCall> done_tag_{this, &KserveInferCall::OnDone};
  std::atomic<int> pending_events_{2};  // finish and done

  core::RequestLog log_{"inference.ModelInfer"};
  const std::shared_ptr<device::CancelToken> cancel_ = std::make_shared<device::CancelToken>();
};

}  // namespace npu::rpc
