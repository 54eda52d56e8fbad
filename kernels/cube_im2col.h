// MTE1's img2col (a Da Vinci core's load3d) as the Cube's A operand: the rows
// of op(A) are the output pixels of a 2-D or 3-D convolution (image by image,
// then oz, oy, ox), its columns the taps (channel, kz, ky, kx) of one group's
// input, and element (pixel, tap) the input value under that tap, 0 in the
// padding, rounded to fp16 as the Cube's operands are
// (cube_operand_rounding.h). The column matrix is never stored: each tile's
// slivers are laid out straight from the NCHW (NCDHW) input. A 2-D
// convolution is the 3-D one of depth 1.
#pragma once

#include <cstdint>

#include "kernels/cube_gemm.h"

namespace npu::kernels {

struct Im2ColGeometry {
  int64_t channels = 0;      // input channels of one group
  int64_t h = 0, w = 0;      // input plane
  int64_t kh = 1, kw = 1;    // kernel
  int64_t sh = 1, sw = 1;    // strides
  int64_t dh = 1, dw = 1;    // dilations
  int64_t pt = 0, pl = 0;    // top and left padding (the bottom and right follow from oh, ow)
  int64_t oh = 0, ow = 0;    // output plane
  int64_t image_stride = 0;  // input elements between images (all groups' channels)
  int64_t group_stride = 0;  // input elements between the first channels of consecutive groups
  // A transposed convolution's (kernels/cube_transposed_im2col.h): the input
  // with sh - 1 (sw - 1) zeros between its rows (columns), strides, dilations
  // and pads the transposed convolution's.
  bool transposed = false;
  // The depth axis (3-D): input depth, kernel, stride, dilation, front padding, output depth.
  int64_t d = 1, kd = 1, sd = 1, dd = 1, pf = 0, od = 1;
  int64_t taps() const { return channels * kd * kh * kw; }
  int64_t pixels() const { return od * oh * ow; }
  int64_t volume() const { return d * h * w; }  // one input channel
};

// The GEMM's batch index is the group. `input` must outlive the GEMM.
class Im2ColA final : public CubeASource {
 public:
  Im2ColA(const void* input, ElemType type, const Im2ColGeometry& g) : input_(input), type_(type), g_(g) {}
  void Pack(int64_t group, int64_t m0, int64_t mt, int64_t k, int mr, bool saturate, float* out) const override;
  // Each input value under any tap once (padding holds zeros).
  uint64_t SaturatedOperands(int64_t groups, int64_t m) const override;
  void ExactRows(int64_t group, int64_t m0, int64_t mt, int64_t k, float* out) const override;

 private:
  const void* input_;
  ElemType type_;
  Im2ColGeometry g_;
};

}  // namespace npu::kernels
