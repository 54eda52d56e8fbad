// The geometry of a 1-D, 2-D or 3-D convolution (ONNX Conv attributes over
// NCL, NCHW or NCDHW input and [M, C/group, (kd,) (kh,) kw] weights), shared
// by Conv and its gradient (ConvGrad): one parser and validator. A 2-D
// convolution is the 3-D one of depth 1 (d = kd = od = 1), a 1-D one the 2-D
// one of height 1.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "npu/v1/graph.pb.h"
#include "server/graph/node_attributes.h"
#include "server/graph/tensor_type.h"

namespace npu::graph::ops {

struct ConvGeometry {
  int64_t n = 0, c = 0, h = 0, w = 0;    // input
  int64_t m = 0, kh = 0, kw = 0;         // weights [m, c/group, (kd,) kh, kw]
  int64_t group = 1;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1, pt = 0, pl = 0, pb = 0, pr = 0;
  int64_t oh = 0, ow = 0;
  // The depth axis (3-D): input depth, kernel, stride, dilation, front and back pads, output depth.
  int64_t d = 1, kd = 1, sd = 1, dd = 1, pf = 0, pk = 0, od = 1;
  int64_t spatial = 2;  // 1 (a unit height, too), 2 or 3
  int64_t cg() const { return c / group; }
  int64_t mg() const { return m / group; }
  int64_t kdim() const { return cg() * kd * kh * kw; }
  int64_t pixels() const { return od * oh * ow; }
  int64_t volume() const { return d * h * w; }  // one input channel
  Shape OutputShape() const {
    return spatial == 3 ? Shape{n, m, od, oh, ow} : spatial == 2 ? Shape{n, m, oh, ow} : Shape{n, m, ow};
  }
};

// Validates the node's attributes against input `x` and weights `w` and
// derives the output size; INVALID_ARGUMENT naming the node otherwise.
absl::StatusOr<ConvGeometry> ConvGeometryOf(const v1::Node& node, const NodeAttributes& attrs, const Shape& x,
                                            const Shape& w);

// The begin pad of each spatial axis of ConvTranspose `node` over input `x`
// and weights `w` (1-D or 2-D), as the op resolves pads, auto_pad and
// output_shape: what its gradient, a Conv over dY, pads by.
absl::StatusOr<std::vector<int64_t>> ConvTransposeBeginPads(const v1::Node& node, const Shape& x, const Shape& w);

// Conv's attribute schema, which its gradient (ConvGrad) shares.
std::vector<AttrDef> ConvAttributes();

}  // namespace npu::graph::ops
