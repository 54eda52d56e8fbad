#include "server/graph/shape_math.h"

#include <algorithm>

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

absl::StatusOr<int64_t> CheckedElements(absl::Span<const int64_t> dims, absl::string_view what) {
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": dimension ", i, " is negative (", dims[i], ")"));
    }
  }
  // The non-zero dims are bounded even in an empty tensor, so every partial
  // product (strides, loops over outer dims) stays small.
  int64_t n = 1;
  bool empty = false;
  for (int64_t d : dims) {
    if (d == 0) {
      empty = true;
      continue;
    }
    if (n > kMaxElements / d) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": shape ", ShapeToString(Shape(dims.begin(), dims.end())),
                                                     " has more than ", kMaxElements, " elements",
                                                     std::find(dims.begin(), dims.end(), 0) != dims.end()
                                                         ? " (counting only its non-zero dims)"
                                                         : ""));
    }
    n *= d;
  }
  return empty ? 0 : n;
}

absl::StatusOr<int64_t> CheckedExtentSum(absl::Span<const int64_t> extents, absl::string_view what) {
  int64_t total = 0;
  for (size_t i = 0; i < extents.size(); ++i) {
    if (extents[i] < 0) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": entry ", i, " is negative (", extents[i], ")"));
    }
    if (extents[i] > kMaxElements - total) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": the extents add up to more than ", kMaxElements));
    }
    total += extents[i];
  }
  return total;
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
  if (rank <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " = ", axis, " is out of range: the input is a scalar (rank 0), which has no axes"));
  }
  if (axis < -rank || axis >= rank) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " = ", axis, " is out of range for rank ", rank, " (valid: ", -rank, " to ", rank - 1, ")"));
  }
  return axis < 0 ? axis + rank : axis;
}

absl::StatusOr<std::vector<int64_t>> CheckedAxes(absl::Span<const int64_t> axes, int64_t rank,
                                                 absl::string_view what) {
  std::vector<int64_t> out;
  out.reserve(axes.size());
  for (int64_t a : axes) {
    auto axis = CheckedAxis(a, rank, what);
    if (!axis.ok()) return axis.status();
    if (std::find(out.begin(), out.end(), *axis) != out.end()) {
      return absl::InvalidArgumentError(absl::StrCat(what, " names axis ", *axis, " more than once"));
    }
    out.push_back(*axis);
  }
  return out;
}

absl::StatusOr<SliceRange> CheckedSlice(int64_t start, int64_t end, int64_t step, int64_t dim,
                                        absl::string_view what) {
  if (step == 0) return absl::InvalidArgumentError(absl::StrCat(what, ": step is 0"));
  if (dim < 0) return absl::InvalidArgumentError(absl::StrCat(what, ": dimension ", dim, " is negative"));
  // x < 0 and dim >= 0, so x + dim cannot overflow.
  int64_t b = start < 0 ? start + dim : start;
  int64_t e = end < 0 ? end + dim : end;
  // |step| as unsigned: -INT64_MIN does not fit int64.
  const uint64_t stride = step > 0 ? static_cast<uint64_t>(step) : uint64_t{0} - static_cast<uint64_t>(step);
  SliceRange r;
  if (step > 0) {
    b = std::clamp<int64_t>(b, 0, dim);
    e = std::clamp<int64_t>(e, 0, dim);
    if (e > b) r.count = static_cast<int64_t>((static_cast<uint64_t>(e - b) - 1) / stride + 1);
  } else if (dim > 0) {
    b = std::clamp<int64_t>(b, 0, dim - 1);
    e = std::clamp<int64_t>(e, -1, dim - 1);
    if (b > e) r.count = static_cast<int64_t>((static_cast<uint64_t>(b - e) - 1) / stride + 1);
  }
  r.start = r.count > 0 ? b : 0;
  return r;
}

absl::StatusOr<int64_t> CheckedWindowOutput(const WindowGeometry& g, absl::string_view what) {
  auto bad = [&](auto&&... parts) { return absl::InvalidArgumentError(absl::StrCat(what, ": ", parts...)); };
  if (g.kernel < 1) return bad("kernel size ", g.kernel, " must be >= 1");
  if (g.stride < 1) return bad("stride ", g.stride, " must be >= 1");
  if (g.dilation < 1) return bad("dilation ", g.dilation, " must be >= 1");
  if (g.pad_begin < 0 || g.pad_end < 0) return bad("pads ", g.pad_begin, ", ", g.pad_end, " must be >= 0");
  if (g.input < 0) return bad("input extent ", g.input, " is negative");
  // In 128 bits every term of torch's formula is exact for any int64 inputs.
  using i128 = __int128;
  const i128 padded = i128{g.input} + g.pad_begin + g.pad_end;
  // Bounding the padded extent bounds every window position and tap offset a run computes.
  if (padded > kMaxElements) {
    return bad("the padded input extent (input ", g.input, ", pads ", g.pad_begin, " + ", g.pad_end, ") exceeds ",
               kMaxElements);
  }
  const i128 effective = i128{g.dilation} * (g.kernel - 1) + 1;
  const i128 room = padded - effective;  // < 0: the kernel does not fit the padded input
  const i128 s = g.stride;
  // floor(room / s) and, for ceil_mode, ceil(room / s), rounding toward -inf as torch's div_rtn does.
  i128 q = room / s;
  const i128 rem = room % s;
  if (rem < 0) --q;
  i128 out = q + (g.ceil_mode && rem != 0 ? 1 : 0) + 1;
  // A last window that would start in the end padding is dropped (torch; ONNX's reference since opset 19).
  if (g.ceil_mode && out >= 1 && (out - 1) * s >= i128{g.input} + g.pad_begin) --out;
  if (out < 1) {
    return bad("the kernel spans ", absl::StrCat(effective > INT64_MAX ? "more than " : "",
                                                 static_cast<int64_t>(std::min<i128>(effective, INT64_MAX))),
               " elements (kernel ", g.kernel, ", dilation ", g.dilation, "), more than the padded input's ",
               static_cast<int64_t>(padded), " (input ", g.input, ", pads ", g.pad_begin, " + ", g.pad_end, ")");
  }
  return static_cast<int64_t>(out);  // <= padded <= kMaxElements
}

absl::StatusOr<int64_t> CheckedTransposedWindowOutput(const WindowGeometry& g, int64_t output_padding,
                                                      absl::string_view what) {
  auto bad = [&](auto&&... parts) { return absl::InvalidArgumentError(absl::StrCat(what, ": ", parts...)); };
  if (g.kernel < 1) return bad("kernel size ", g.kernel, " must be >= 1");
  if (g.stride < 1) return bad("stride ", g.stride, " must be >= 1");
  if (g.dilation < 1) return bad("dilation ", g.dilation, " must be >= 1");
  if (g.pad_begin < 0 || g.pad_end < 0) return bad("pads ", g.pad_begin, ", ", g.pad_end, " must be >= 0");
  if (g.input < 1) return bad("input extent ", g.input, " must be >= 1");
  if (output_padding < 0 || output_padding >= std::max(g.stride, g.dilation)) {
    return bad("output_padding ", output_padding, " must be >= 0 and smaller than the stride (", g.stride,
               ") or the dilation (", g.dilation, ")");
  }
  using i128 = __int128;  // every term exact for any int64 inputs
  const i128 full = i128{g.stride} * (g.input - 1) + output_padding + i128{g.dilation} * (g.kernel - 1) + 1;
  const i128 out = full - g.pad_begin - g.pad_end;
  if (full > kMaxElements) {
    return bad("the output before padding (stride ", g.stride, ", input ", g.input, ", kernel ", g.kernel,
               ", dilation ", g.dilation, ") exceeds ", kMaxElements);
  }
  if (out < 1) {
    return bad("pads ", g.pad_begin, " + ", g.pad_end, " leave no output of the ", static_cast<int64_t>(full),
               " the input makes");
  }
  return static_cast<int64_t>(out);
}

}  // namespace npu::graph
