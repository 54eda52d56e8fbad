// NumPy .npy files <-> npu.v1.Tensor.
//
// Reads format versions 1.0, 2.0 and 3.0; writes 1.0 (2.0 when the header
// needs it) with the header padded so the data starts 64-byte aligned, as
// NumPy does. Dtypes: '<f2' '<f4' '<i4' '|i1' '|b1' '<i8'; C order only.
// Every malformed file is an absl error naming the file and what is wrong.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "npu/v1/tensor.pb.h"

namespace npu::client {

absl::StatusOr<npu::v1::Tensor> ReadNpy(const std::string& path);
absl::Status WriteNpy(const std::string& path, const npu::v1::Tensor& tensor);

// The same on bytes in memory; `source` names them in errors.
absl::StatusOr<npu::v1::Tensor> DecodeNpy(absl::string_view bytes, absl::string_view source);
absl::StatusOr<std::string> EncodeNpy(const npu::v1::Tensor& tensor);

// The NumPy descr for a dtype ("<f2"), or "" when it has none.
absl::string_view NpyDescr(npu::v1::DataType dtype);

}  // namespace npu::client
