// Checked shape arithmetic: every element count, byte size and window extent
// an op or the validator computes goes through here, so an overflow, a negative
// extent or an axis out of range is an INVALID_ARGUMENT naming the culprit
// instead of a wrapped integer that passes a size check and crashes a run.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/graph/tensor_type.h"

namespace npu::graph {

// a * b and a + b, or INVALID_ARGUMENT "`what` overflows int64" (what names the quantity).
absl::StatusOr<int64_t> CheckedMul(int64_t a, int64_t b, absl::string_view what);
absl::StatusOr<int64_t> CheckedAdd(int64_t a, int64_t b, absl::string_view what);

// Product of dims, each >= 0, at most kMaxElements; `what` names the tensor.
absl::StatusOr<int64_t> CheckedElements(const Shape& shape, absl::string_view what);
// Elements x element size, at most `max_bytes`.
absl::StatusOr<uint64_t> CheckedBytes(const TensorType& type, uint64_t max_bytes, absl::string_view what);

// `axis` in [-rank, rank) mapped to [0, rank). A rank-0 tensor has no axes, so
// every axis is out of range for it. For ops whose axis may also name the
// position one past the end (Unsqueeze, Flatten), pass rank + 1.
absl::StatusOr<int64_t> CheckedAxis(int64_t axis, int64_t rank, absl::string_view what);

// One spatial extent of a sliding window (Conv, pooling), ONNX's formula:
//   out = floor_or_ceil((in + pad_begin + pad_end - dilation * (kernel - 1) - 1) / stride) + 1
// kernel, stride and dilation must be >= 1 and pads >= 0; the dilated kernel
// must fit the padded input (torch and ONNX reject it otherwise), so out >= 1.
struct WindowGeometry {
  int64_t input = 0;
  int64_t kernel = 1;
  int64_t stride = 1;
  int64_t dilation = 1;
  int64_t pad_begin = 0;
  int64_t pad_end = 0;
  bool ceil_mode = false;
};
absl::StatusOr<int64_t> CheckedWindowOutput(const WindowGeometry& g, absl::string_view what);

}  // namespace npu::graph
