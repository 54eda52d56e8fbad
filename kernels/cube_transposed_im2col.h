// The Cube's A operand of a transposed convolution (ConvTranspose), laid out
// as the Da Vinci core runs it (CANN's Conv2DBackpropInput): a convolution
// over the input with `stride - 1` zeros between its elements, so the GEMM's
// rows are the output pixels (image by image, then oy, ox), its columns the
// taps (channel, ky, kx) of one group's input, and element (pixel, tap) is
//   x[c, iy, ix] where oy + pt - ky * dh = iy * sh and ox + pl - kx * dw = ix * sw,
// 0 where no input element lands (between the strided elements, or outside
// the input), rounded to fp16 as every Cube operand is. With B[tap, m] =
// W[c, m, ky, kx] (the weights unflipped) the GEMM is the ONNX ConvTranspose.
// The column matrix is never stored: each tile's slivers are gathered straight
// from the NCHW input.
#pragma once

#include <cstdint>

#include "kernels/cube_im2col.h"

namespace npu::kernels {

// The input index that output position `o` of a transposed convolution reads
// through tap `t`, or -1 where it falls between strided elements or outside
// the input (`extent` elements).
inline int64_t TransposedSourceIndex(int64_t o, int64_t t, int64_t pad, int64_t stride, int64_t dilation,
                                     int64_t extent) {
  const int64_t n = o + pad - t * dilation;
  if (n < 0 || n % stride != 0) return -1;
  const int64_t i = n / stride;
  return i < extent ? i : -1;
}

// Im2ColA::Pack for a geometry with `transposed` set: its strides, dilations
// and pads are those of the transposed convolution.
void PackTransposedIm2Col(const void* input, ElemType type, const Im2ColGeometry& g, int64_t group, int64_t m0,
                          int64_t mt, int64_t k, int mr, bool saturate, float* out);

}  // namespace npu::kernels
