// One Run call in flight: from the request to Finish. Owns what the call keeps
// alive (its log line, its in-flight count for the drain, its cancel token) and
// deletes itself when gRPC is done with the call (OnDone).
#pragma once

#include <memory>
#include <string>

#include <grpcpp/support/server_callback.h>

#include "npu/v1/runtime.pb.h"
#include "server/device/cancel_token.h"
#include "server/graph/runner.h"
#include "server/rpc/request_log.h"
#include "server/rpc/run_binding.h"
#include "server/rpc/server_state.h"

namespace npu::rpc {

class RunReactor final : public grpc::ServerUnaryReactor {
 public:
  // Starts the run (or finishes the call at once on a bad request).
  static RunReactor* Start(ServerState& state, grpc::CallbackServerContext* ctx, const v1::RunRequest* req,
                           v1::RunResponse* resp);

  void OnCancel() override;
  void OnDone() override { delete this; }

 private:
  RunReactor(ServerState& state, grpc::CallbackServerContext* ctx, const v1::RunRequest* req,
             v1::RunResponse* resp);
  ~RunReactor() override;
  absl::Status Submit();
  absl::Status Respond(absl::StatusOr<graph::ExecResult> result);
  // Logs, counts, and finishes the call: the last thing done with `this`.
  void Complete(absl::Status status);

  ServerState& state_;
  grpc::CallbackServerContext* const ctx_;
  const v1::RunRequest* const req_;
  v1::RunResponse* const resp_;
  RequestLog log_{"Run"};
  const std::shared_ptr<device::CancelToken> cancel_ = std::make_shared<device::CancelToken>();
  std::string tenant_;
  bool admitted_ = false;  // counted in runs_total
  device::Device* device_ = nullptr;
  std::shared_ptr<const graph::Plan> plan_;
  RunBinding binding_;
};

}  // namespace npu::rpc
