// KServe v2 HTTP/REST inference bodies with the binary tensor data extension:
// a JSON object, then (when Inference-Header-Content-Length says where the
// JSON ends) the raw bytes of each input whose "binary_data_size" parameter
// is set, in input order. Outputs come back as JSON "data" or, when asked
// ("binary_data" on the output, "binary_data_output" on the request), as raw
// bytes after the JSON with their "binary_data_size".
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/rpc/kserve_infer.h"

namespace npu::rpc {

struct HttpInferRequest {
  InferRequest request;
  bool binary_output_default = false;  // "binary_data_output"
  std::vector<bool> binary_outputs;    // per request.outputs: its "binary_data", else the default
  // "timeout" (int64 microseconds, as Triton): the run is stopped past it.
  std::optional<std::chrono::microseconds> timeout;
};

// `body` is the whole HTTP body (binary inputs view it where they are aligned,
// ViewRawTensor: it must outlive the run), `header_length` the
// Inference-Header-Content-Length value when the request has one. The model
// and version come from the URL.
absl::StatusOr<HttpInferRequest> DecodeHttpInferRequest(absl::string_view body, std::optional<uint64_t> header_length,
                                                        std::string model_name, std::string model_version);

struct HttpInferResponse {
  std::string body;
  size_t header_length = 0;  // bytes of JSON at the start of body
  bool binary = false;       // some output follows the JSON as raw bytes
};

HttpInferResponse EncodeHttpInferResponse(const InferResult& result, const HttpInferRequest& asked);

}  // namespace npu::rpc
