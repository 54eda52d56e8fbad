// KServe v2 HTTP/REST JSON values <-> tensors and parameters: a tensor's
// "data" array (nested in the tensor's shape or flat, row-major) and the
// "parameters" objects. JSON itself is nlohmann::json's (Debian's
// nlohmann-json3-dev), not a parser of ours, behind the bounds of
// kserve_json_parse.h.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "server/graph/host_tensor.h"
#include "server/rpc/kserve_infer.h"

namespace npu::rpc {

// The elements of `data` (a JSON array, nested at most one level per
// dimension) as a fresh tensor of `type`. Numbers are coerced to the datatype
// when they fit it exactly: integers (or integral floats) in the integer
// type's range, any number for FP32 (nearest float) and FP16 (nearest half,
// ties to even; beyond +-65504 is an error), booleans (or 0 and 1) for BOOL.
// Errors name `what` and the element's flat index.
absl::StatusOr<graph::HostTensor> TensorFromJson(const graph::TensorType& type, const nlohmann::json& data,
                                                 const std::string& what);

// A flat JSON array of the tensor's elements: FP16 and FP32 as numbers
// (NaN and infinities, which JSON cannot hold, as null), BOOL as booleans.
nlohmann::json TensorToJson(const graph::HostTensor& tensor);

// A "parameters" object: each value a string, number or boolean (integers
// become int64, or uint64 past INT64_MAX; other numbers double).
absl::StatusOr<InferParameters> ParametersFromJson(const nlohmann::json& object, const std::string& what);
nlohmann::json ParametersToJson(const InferParameters& params);

}  // namespace npu::rpc
