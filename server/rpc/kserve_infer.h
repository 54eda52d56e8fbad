// One KServe v2 inference between the wire forms (the gRPC messages, HTTP's
// JSON with binary data) and the core's one entry (core::Serve). The
// frontends decode tensors and parameters into an InferRequest, call
// StartInfer, which translates it into the core's request, and encode the
// InferResult back.
//
// Parameters this server reads (others are ignored; an unknown "npu_" one is
// an error):
//   request  npu_device (string)  run on this device ("npu:1"); default: the
//                                 least busy device
//   request  npu_profile (bool)   also return the per-node profile
//   request  priority (uint64)    Triton's: the priority level, for a model
//                                 with dynamic batching (0: its default)
//   request  timeout (uint64)     Triton's: the queue timeout in
//                                 microseconds, where the model allows
//                                 overrides (HTTP also stops the run then)
// and returns in every response:
//   npu_device, npu_preset, npu_cost_model (strings); npu_device_time_ns,
//   npu_total_cycles, npu_queue_cycles, npu_host_time_ns (int64); how the
//   request was executed (int64): npu_batch_size (rows of the device run it
//   shared; its own rows when it ran alone), npu_batch_requests (requests in
//   that run), npu_queue_ns (waiting in the model's batcher), npu_compute_ns
//   (from leaving the queue to the answer); and, when asked, npu_profile: the
//   npu.v1.Profile of the run as JSON (proto field names), per-node rows
//   without the per-tile slices.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kserve/grpc_service.pb.h"
#include "server/device/cancel_token.h"
#include "server/graph/host_tensor.h"
#include "server/core/server_state.h"

namespace npu::rpc {

inline constexpr char kParamDevice[] = "npu_device";
inline constexpr char kParamProfile[] = "npu_profile";
inline constexpr char kParamPriority[] = "priority";
inline constexpr char kParamTimeout[] = "timeout";
inline constexpr char kParamBatchSize[] = "npu_batch_size";
inline constexpr char kParamBatchRequests[] = "npu_batch_requests";
inline constexpr char kParamQueueNs[] = "npu_queue_ns";
inline constexpr char kParamComputeNs[] = "npu_compute_ns";

// The protocol's own parameter value type serves both wire forms.
using InferParameters = google::protobuf::Map<std::string, inference::InferParameter>;

struct InferTensor {
  std::string name;
  graph::HostTensor tensor;  // the datatype and shape the request declared, with the data
};

struct RequestedOutput {
  std::string name;
  InferParameters parameters;  // HTTP's binary_data is read by its frontend
};

struct InferRequest {
  std::string model_name;
  std::string model_version;
  std::string id;
  InferParameters parameters;
  std::vector<InferTensor> inputs;
  std::vector<RequestedOutput> outputs;  // in response order; empty: every output of the model
};

struct InferResult {
  std::string model_name;
  std::string model_version;
  std::string id;
  InferParameters parameters;
  std::vector<InferTensor> outputs;
};

using InferDone = std::function<void(absl::StatusOr<InferResult>)>;

// Checks the request's parameters, translates it and serves it (core::Serve:
// the model resolved for `tenant`, inputs and requested outputs bound, the
// run counted), calling `done` exactly once: on the thread that ends the run,
// or on this one when the request is refused. The request's tensors may view
// bytes the caller owns; they must stay alive until `done`.
void StartInfer(core::ServerState& state, const std::string& tenant, InferRequest request,
                std::shared_ptr<device::CancelToken> cancel, InferDone done);

// A bool parameter: `fallback` when absent, INVALID_ARGUMENT naming it when
// it holds another type.
absl::StatusOr<bool> BoolParameter(const InferParameters& params, const std::string& name, bool fallback,
                                   absl::string_view where);

}  // namespace npu::rpc
