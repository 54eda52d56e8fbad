// Checked shape arithmetic: every element count, extent, axis and slice bound
// that shape inference derives from client-given numbers goes through here, so
// an overflow, a negative extent or an axis out of range is an INVALID_ARGUMENT
// naming the culprit instead of a wrapped integer that passes a size check and
// crashes a run.
//
// The rule for op authors (server/graph/ops/*.cc, infer functions):
//   - never multiply, add or subtract dims, attribute values or constant-input
//     values with plain operators; use CheckedMul/CheckedAdd/CheckedElements,
//     CheckedWindowOutput, CheckedSlice, BroadcastShapes (broadcast.h);
//   - normalise every axis with CheckedAxis/CheckedAxes (through NormalizeAxis
//     and NormalizeAxes in ops/shape_args.h, which add the node's label): a
//     rank-0 tensor has no axes;
//   - a shape built from values (Reshape's target, Expand's shape) is checked
//     with CheckedElements before it is returned.
// Products of the dims of one valid tensor (<= kMaxElements) and offsets into
// it cannot overflow; the run functions rely on that and on inference having
// rejected everything else. `what` names the quantity in the message
// ("attribute \"pads\"", "input \"x\""); ops wrap it with the node's label.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "server/graph/tensor_type.h"

namespace npu::graph {

// a * b and a + b, or INVALID_ARGUMENT "`what`: a x b overflows int64".
absl::StatusOr<int64_t> CheckedMul(int64_t a, int64_t b, absl::string_view what);
absl::StatusOr<int64_t> CheckedAdd(int64_t a, int64_t b, absl::string_view what);

// Product of dims (of no dims: 1). Each dim must be >= 0 and the product of
// the non-zero ones at most kMaxElements: an empty tensor cannot hide a huge
// dim that a loop over its outer dims or a stride would then meet.
absl::StatusOr<int64_t> CheckedElements(absl::Span<const int64_t> dims, absl::string_view what);
// Sum of extents, each >= 0, at most kMaxElements (Concat's axis, Split's sizes).
absl::StatusOr<int64_t> CheckedExtentSum(absl::Span<const int64_t> extents, absl::string_view what);
// Elements x element size, at most `max_bytes`.
absl::StatusOr<uint64_t> CheckedBytes(const TensorType& type, uint64_t max_bytes, absl::string_view what);

// `axis` in [-rank, rank) mapped to [0, rank). A rank-0 tensor has no axes, so
// every axis is out of range for it. For ops whose axis may also name the
// position one past the end (Unsqueeze's output rank, Flatten), pass rank + 1.
absl::StatusOr<int64_t> CheckedAxis(int64_t axis, int64_t rank, absl::string_view what);
// Every entry through CheckedAxis; an axis named twice (as 1 and -rank+1, say)
// is an error, as in torch and NumPy.
absl::StatusOr<std::vector<int64_t>> CheckedAxes(absl::Span<const int64_t> axes, int64_t rank,
                                                 absl::string_view what);

// One axis of an ONNX Slice, exactly per the spec's clamping (opset 13):
// start/end < 0 count from the end (+dim); then for step > 0 both clamp to
// [0, dim], for step < 0 start clamps to [0, dim - 1] and end to [-1, dim - 1];
// the slice takes start, start + step, ... while before end. Any int64 start,
// end and step != 0 is valid (INT64_MIN/MAX included) and nothing overflows.
struct SliceRange {
  int64_t start = 0;  // first element taken (meaningless when count == 0)
  int64_t count = 0;  // elements taken
};
absl::StatusOr<SliceRange> CheckedSlice(int64_t start, int64_t end, int64_t step, int64_t dim,
                                        absl::string_view what);

// One spatial extent of a sliding window (Conv, pooling), ONNX's formula:
//   out = floor_or_ceil((in + pad_begin + pad_end - dilation * (kernel - 1) - 1) / stride) + 1
// kernel, stride and dilation must be >= 1 and pads >= 0; the padded input
// extent at most kMaxElements (so window offsets in a run cannot overflow); the
// dilated kernel must fit the padded input (torch and ONNX reject it
// otherwise), so out >= 1.
// With ceil_mode a last window that would start inside the end padding is
// dropped, as torch (and ONNX's reference since opset 19) do.
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

// One spatial extent of a transposed convolution (ConvTranspose), ONNX's and
// torch's formula:
//   out = stride * (in - 1) + output_padding + dilation * (kernel - 1) + 1 - pad_begin - pad_end
// kernel, stride and dilation >= 1, pads >= 0, 0 <= output_padding < max(stride,
// dilation) (torch's rule: a larger one would add outputs no input reaches),
// in >= 1, and out in [1, kMaxElements]. `g.ceil_mode` is ignored.
absl::StatusOr<int64_t> CheckedTransposedWindowOutput(const WindowGeometry& g, int64_t output_padding,
                                                      absl::string_view what);

}  // namespace npu::graph
