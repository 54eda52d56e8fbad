// Host-side npu.v1.Tensor helpers: sizes, names, and float conversions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "npu/v1/tensor.pb.h"

namespace npu::client {

using npu::v1::DataType;

// Bytes per element; 0 for DATA_TYPE_UNSPECIFIED and unknown values.
size_t DataTypeSize(DataType dtype);

// NumPy-style lower-case name: "float16", "int32", "bool", ...
absl::string_view DataTypeName(DataType dtype);

// Product of the dims (1 for a scalar). INVALID_ARGUMENT on a negative dim or
// when the count overflows int64.
absl::StatusOr<int64_t> ElementCount(absl::Span<const int64_t> shape);
absl::StatusOr<int64_t> ElementCount(const npu::v1::Tensor& tensor);

// INVALID_ARGUMENT unless data holds exactly ElementCount * DataTypeSize bytes.
absl::Status CheckTensorBytes(const npu::v1::Tensor& tensor);

// "[2, 3]"; "[]" for a scalar.
std::string ShapeString(absl::Span<const int64_t> shape);

// dtype FLOAT32 stores the floats; FLOAT16 rounds each to nearest even.
// Other dtypes are INVALID_ARGUMENT, as is a count that does not match shape.
absl::StatusOr<npu::v1::Tensor> MakeFloatTensor(DataType dtype, std::vector<int64_t> shape,
                                                absl::Span<const float> values);

// Every element as float (int64 values beyond 2^24 lose precision).
absl::StatusOr<std::vector<float>> TensorToFloats(const npu::v1::Tensor& tensor);

}  // namespace npu::client
