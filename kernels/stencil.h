// The Vector unit's stencil over one image plane: depthwise / grouped
// convolution (a weighted sum of taps), max pooling and sum pooling, vectorised
// along output rows. MTE2 brings each input plane into UB already padded and,
// for a horizontal stride s, split into s phases, so that every tap of a row
// of outputs is one contiguous load (PadPlane); the Vector kernel
// (VectorKernelSet::stencil) then runs one instruction per tap.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/fp16.h"

namespace npu::kernels {

struct StencilShape {
  int64_t h = 0, w = 0;    // input plane
  int64_t oh = 0, ow = 0;  // output plane
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t pt = 0, pl = 0;  // padding before the first row / column

  // The padded plane: the PaddedRows() input rows the outputs reach (from
  // row -pt), each as sw phases of PhaseLen() floats: padded column c (input
  // column c - pl) is element c / sw of phase c % sw. A vector's worth of slack
  // ends each phase, so a last partial vector of outputs may load whole vectors.
  int64_t PaddedRows() const { return (oh - 1) * sh + (kh - 1) * dh + 1; }
  int64_t PhaseLen() const { return ow + (kw - 1) * dw / sw + 1 + 16; }
  int64_t PlaneFloats() const { return PaddedRows() * sw * PhaseLen(); }
};

enum class StencilOp : uint8_t {
  kWeighted,  // init + sum over channels and taps of w * x (fused multiply-adds in (channel, ky, kx) order)
  kMax,       // max over taps; a NaN input wins
  kSum,       // init + sum over taps, then divided by divisor[oy * ow + ox] when given
};

// Writes one input plane (h x w, fp32 or fp16 at `in`) padded with `pad` into
// `padded` (PlaneFloats() floats), widened to fp32.
void PadPlane(const StencilShape& s, const void* in, bool fp16, float pad, float* padded);

// Whether the padded plane stays close to the input's size. Kernels, pads or
// dilations far larger than the input (attributes a client chooses) would make
// it huge; those shapes run StencilSkippingPadding instead.
bool PaddingIsCheap(const StencilShape& s);

// The stencil of one output plane (fp32, oh x ow) over `channels` unpadded fp32
// input planes, visiting only the taps inside the input: work bounded by the
// input, whatever the kernel. Same operation order as the Vector kernel, so
// the same results, except that a padded tap's weight is not multiplied by
// zero (an infinite weight there gives no NaN).
void StencilSkippingPadding(StencilOp op, const StencilShape& s, const float* const* planes, size_t channels,
                            const float* weights, float init, const float* divisor, float* out);

}  // namespace npu::kernels
