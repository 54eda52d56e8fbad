// The window geometry of MaxPool and AveragePool (2-D, NCHW; ONNX attributes,
// torch's ceil-mode rule), shared by the pools and their gradients.
#pragma once

#include <algorithm>
#include <cstdint>

#include "absl/status/statusor.h"
#include "npu/v1/graph.pb.h"
#include "server/graph/node_attributes.h"
#include "server/graph/op_registry.h"
#include "server/graph/tensor_type.h"

namespace npu::graph::ops {

struct PoolGeometry {
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t pt = 0, pl = 0, pb = 0, pr = 0;
  int64_t oh = 0, ow = 0;
  bool include_pad = false;
};

// Taps k in [begin, end) of a window starting at `start` (stride `dilation`)
// that land in [0, extent). Offsets are bounded by the padded extent
// (CheckedWindowOutput), so nothing here overflows.
struct TapRange {
  int64_t begin = 0, end = 0;
};
inline TapRange TapsInside(int64_t start, int64_t kernel, int64_t dilation, int64_t extent) {
  TapRange r;
  r.begin = start >= 0 ? 0 : (-start + dilation - 1) / dilation;
  r.end = start >= extent ? 0 : std::min(kernel, (extent - 1 - start) / dilation + 1);
  r.end = std::max(r.end, r.begin);
  return r;
}

// Validates the node's attributes against input `x` (`max`: MaxPool's
// attributes, else AveragePool's) and derives the output size.
absl::StatusOr<PoolGeometry> PoolGeometryOf(const v1::Node& node, const NodeAttributes& attrs, const Shape& x,
                                            bool max);

// The attribute schema of MaxPool (`max`) or AveragePool, which their gradients share.
std::vector<AttrDef> PoolAttributes(bool max);

// AveragePool's divisor for output (oy, ox) of an h x w plane, as torch
// divides: the window clipped to the padded input (count_include_pad), or to
// the input itself.
inline int64_t AverageDivisor(const PoolGeometry& g, int64_t h, int64_t w, int64_t oy, int64_t ox) {
  const int64_t y0 = oy * g.sh - g.pt, x0 = ox * g.sw - g.pl;
  if (g.include_pad) {
    const int64_t y1 = std::min(y0 + g.kh, h + g.pb), x1 = std::min(x0 + g.kw, w + g.pr);
    return (y1 - y0) * (x1 - x0);
  }
  const int64_t rows = std::min(y0 + g.kh, h) - std::max<int64_t>(y0, 0);
  const int64_t cols = std::min(x0 + g.kw, w) - std::max<int64_t>(x0, 0);
  return std::max<int64_t>(1, std::max<int64_t>(0, rows) * std::max<int64_t>(0, cols));
}

}  // namespace npu::graph::ops
