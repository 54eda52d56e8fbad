// A KServe tensor's declared type and raw bytes, the same in both wire forms
// (gRPC raw_input_contents, HTTP binary data).
#pragma once

#include <string>

#include <google/protobuf/repeated_field.h>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/graph/host_tensor.h"
#include "server/graph/tensor_type.h"

namespace npu::rpc {

// The datatype name and shape a request declares, checked (served datatype,
// rank, non-negative dims, element count). Errors name `what`.
absl::StatusOr<graph::TensorType> DeclaredType(absl::string_view datatype,
                                               const google::protobuf::RepeatedField<int64_t>& shape,
                                               const std::string& what);

// `bytes` as a tensor of `type`: the length must be the type's, and BOOL
// bytes 0 or 1. Viewed without copying when they start on a 16-byte boundary,
// as protobuf's bytes fields do (they must then outlive the tensor); else
// copied into an aligned buffer, since kernels read whole elements (HTTP binary
// data follows a JSON header of any length). `source` names where the bytes
// came from in errors ("raw_input_contents[0]").
absl::StatusOr<graph::HostTensor> ViewRawTensor(const graph::TensorType& type, absl::string_view bytes,
                                                const std::string& what, absl::string_view source);

}  // namespace npu::rpc
