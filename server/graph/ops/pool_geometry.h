// The window geometry of MaxPool, AveragePool and LpPool (2-D NCHW or 3-D NCDHW; ONNX
// attributes, torch's ceil-mode rule), shared by the pools and their
// gradients. A 2-D pool is the 3-D one of depth 1 (kd = 1, od = d = 1), a
// 1-D one the 2-D one of height 1.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "absl/status/statusor.h"
#include "kernels/taps_inside.h"
#include "npu/v1/graph.pb.h"
#include "server/graph/node_attributes.h"
#include "server/graph/op_registry.h"
#include "server/graph/tensor_type.h"

namespace npu::graph::ops {

enum class PoolKind { kMax, kAverage, kLp };

struct PoolGeometry {
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t pt = 0, pl = 0, pb = 0, pr = 0;
  int64_t oh = 0, ow = 0;
  bool include_pad = false;
  bool column_major = false;  // MaxPool's storage_order 1: its Indices count the spatial axes column major
  // The depth axis (3-D): input depth, kernel, stride, dilation, front and back pads, output depth.
  int64_t d = 1, kd = 1, sd = 1, dd = 1, pf = 0, pk = 0, od = 1;
  int64_t h = 0, w = 0;  // the input plane
  int64_t rank = 4;      // of the input: 3, 4 or 5
  int64_t p = 2;         // LpPool's exponent
  int64_t in_volume() const { return d * h * w; }
  int64_t out_volume() const { return od * oh * ow; }
  // The pooled shape of an input of batch n and c channels.
  Shape Pooled(int64_t n, int64_t c) const {
    return rank == 5 ? Shape{n, c, od, oh, ow} : rank == 4 ? Shape{n, c, oh, ow} : Shape{n, c, ow};
  }
};

using kernels::TapRange;
using kernels::TapsInside;

// Validates the node's attributes against input `x` (those of the `kind`'s
// op) and derives the output size.
absl::StatusOr<PoolGeometry> PoolGeometryOf(const v1::Node& node, const NodeAttributes& attrs, const Shape& x,
                                            PoolKind kind);

// The attribute schema of the kind's op, which its gradient shares.
std::vector<AttrDef> PoolAttributes(PoolKind kind);

// LpPool's |v|^p, the term its windows sum.
inline float LpTerm(float v, int64_t p) {
  const float a = std::fabs(v);
  return p == 1 ? a : p == 2 ? a * a : std::pow(a, static_cast<float>(p));
}

// AveragePool's count along one axis for the window at output `o`, as torch
// divides: the window clipped to the padded input (count_include_pad), or to
// the input itself.
inline int64_t AverageCount(bool include_pad, int64_t o, int64_t kernel, int64_t stride, int64_t pad_begin,
                            int64_t pad_end, int64_t extent) {
  const int64_t a = o * stride - pad_begin;
  if (include_pad) return std::min(a + kernel, extent + pad_end) - a;
  return std::max<int64_t>(0, std::min(a + kernel, extent) - std::max<int64_t>(a, 0));
}

// AveragePool's divisor for output (oz, oy, ox): the product of the counts.
inline int64_t AverageDivisor(const PoolGeometry& g, int64_t oz, int64_t oy, int64_t ox) {
  const int64_t n = AverageCount(g.include_pad, oz, g.kd, g.sd, g.pf, g.pk, g.d) *
                    AverageCount(g.include_pad, oy, g.kh, g.sh, g.pt, g.pb, g.h) *
                    AverageCount(g.include_pad, ox, g.kw, g.sw, g.pl, g.pr, g.w);
  return std::max<int64_t>(1, n);
}

}  // namespace npu::graph::ops
