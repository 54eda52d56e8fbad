// KServe v2 gRPC messages <-> the frontend-neutral InferRequest/InferResult.
#pragma once

#include "absl/status/statusor.h"
#include "kserve/grpc_service.pb.h"
#include "server/rpc/kserve_infer.h"

namespace npu::rpc {

// Inputs in raw_input_contents are viewed, not copied (`req` must outlive the
// run); typed `contents` are converted into fresh tensors. Every input's data
// must be in exactly one form, of the datatype's field, with one value per
// element; FP16 travels only raw. Errors are INVALID_ARGUMENT naming the input.
absl::StatusOr<InferRequest> DecodeInferRequest(const inference::ModelInferRequest& req);

// Outputs go in raw_output_contents when `raw` or when one of them is FP16
// (which has no typed field), else in each output's typed contents.
void EncodeInferResponse(InferResult result, bool raw, inference::ModelInferResponse* resp);

}  // namespace npu::rpc
