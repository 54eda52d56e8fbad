// npu.v1 Run <-> the core's request (core/request.h): the graph by id or
// inline (viewed in the request, which outlives the run), inputs inline
// (viewed) or by handle, the options; and the core's response as a
// RunResponse (outputs as tensors or handles, debug intermediates, profile).
#pragma once

#include "absl/status/statusor.h"
#include "npu/v1/runtime.pb.h"
#include "server/core/request.h"

namespace npu::rpc {

// Everything but the tenant and the cancel token, which the call supplies.
// `req` must outlive the core's request.
absl::StatusOr<core::Request> TranslateRun(const v1::RunRequest& req);

void EncodeRunResponse(core::Response result, v1::RunResponse* resp);

}  // namespace npu::rpc
