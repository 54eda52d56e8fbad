// KServe v2 datatype names ("FP32", "INT64", ...) <-> npu.v1 data types.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "npu/v1/tensor.pb.h"

namespace npu::rpc {

// The protocol's name of a type the server runs: FP16, FP32, INT32, INT8,
// BOOL, INT64.
const char* KserveDataTypeName(v1::DataType dtype);

// The server's type for a protocol name. The protocol's other names (UINT8,
// UINT16, UINT32, UINT64, INT16, FP64, BF16, BYTES) get INVALID_ARGUMENT
// naming `what`, the datatype and the ones served; so does an unknown name.
absl::StatusOr<v1::DataType> DataTypeFromKserve(absl::string_view name, absl::string_view what);

}  // namespace npu::rpc
