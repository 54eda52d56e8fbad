#include "server/graph/shape_math.h"

#include "absl/strings/str_cat.h"

namespace npu::graph {

absl::StatusOr<int64_t> CheckedMul(int64_t a, int64_t b, absl::string_view what) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": ", a, " x ", b, " overflows int64"));
  }
  return r;
}

absl::StatusOr<int64_t> CheckedAdd(int64_t a, int64_t b, absl::string_view what) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": ", a, " + ", b, " overflows int64"));
  }
  return r;
}

absl::StatusOr<int64_t> CheckedElements(const Shape& shape, absl::string_view what) {
  int64_t n = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": dimension ", i, " is negative (", shape[i], ")"));
    }
  }
  for (size_t i = 0; i < shape.size(); ++i) {
    const int64_t d = shape[i];
    if (d == 0) return 0;  // an empty tensor, whatever the other dims
    if (n > kMaxElements / d) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": shape ", ShapeToString(shape), " has more than ", kMaxElements, " elements"));
    }
    n *= d;
  }
  return n;
}

absl::StatusOr<uint64_t> CheckedBytes(const TensorType& type, uint64_t max_bytes, absl::string_view what) {
  auto n = CheckedElements(type.shape, what);
  if (!n.ok()) return n.status();
  const uint64_t bytes = static_cast<uint64_t>(*n) * ElementSize(type.dtype);  // n <= 2^40, size <= 8
  if (bytes > max_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": ", ToString(type), " is ", bytes, " bytes; the limit is ", max_bytes));
  }
  return bytes;
}

absl::StatusOr<int64_t> CheckedAxis(int64_t axis, int64_t rank, absl::string_view what) {
  if (rank <= 0 || axis < -rank || axis >= rank) {
    return absl::InvalidArgumentError(absl::StrCat(what, " ", axis, " is out of range for rank ", rank,
                                                   rank <= 0 ? " (a scalar has no axes)" : ""));
  }
  return axis < 0 ? axis + rank : axis;
}

absl::StatusOr<int64_t> CheckedWindowOutput(const WindowGeometry& g, absl::string_view what) {
  auto bad = [&](auto&&... parts) { return absl::InvalidArgumentError(absl::StrCat(what, ": ", parts...)); };
  if (g.kernel < 1) return bad("kernel size ", g.kernel, " must be >= 1");
  if (g.stride < 1) return bad("stride ", g.stride, " must be >= 1");
  if (g.dilation < 1) return bad("dilation ", g.dilation, " must be >= 1");
  if (g.pad_begin < 0 || g.pad_end < 0) return bad("pads ", g.pad_begin, ", ", g.pad_end, " must be >= 0");
  if (g.input < 0) return bad("input extent ", g.input, " is negative");
  // Every term below kMaxElements-sized dims, so the sums are checked once.
  auto padded = CheckedAdd(g.input, g.pad_begin, what);
  if (padded.ok()) padded = CheckedAdd(*padded, g.pad_end, what);
  if (!padded.ok()) return padded.status();
  auto span = CheckedMul(g.dilation, g.kernel - 1, what);
  if (!span.ok()) return span.status();
  const int64_t effective = *span + 1;  // span < INT64_MAX since kernel - 1 < INT64_MAX / dilation
  if (effective > *padded) {
    return bad("the kernel spans ", effective, " elements (kernel ", g.kernel, ", dilation ", g.dilation,
               "), more than the padded input's ", *padded, " (input ", g.input, ", pads ", g.pad_begin, "+",
               g.pad_end, ")");
  }
  const int64_t room = *padded - effective;
  const int64_t out = room / g.stride + (g.ceil_mode && room % g.stride != 0 ? 1 : 0) + 1;
  if (out > kMaxElements) return bad("output extent ", out, " exceeds ", kMaxElements);
  return out;
}

}  // namespace npu::graph
