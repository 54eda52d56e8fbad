// The Vector unit's stencil over one image plane: depthwise / grouped
// convolution (a weighted sum of taps), max pooling and sum pooling, vectorised
// along the outputs. MTE2 brings each input plane into UB already padded and
// split into its stride phases (PadPlane), so that every tap of a run of
// outputs is one contiguous load, whatever the strides; the Vector kernel
// (VectorKernelSet::stencil) then runs one instruction per tap.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/fp16.h"

namespace npu::kernels {

struct StencilShape {
  int64_t h = 0, w = 0;    // input plane
  int64_t oh = 0, ow = 0;  // output plane
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t pt = 0, pl = 0;  // padding before the first row / column

  // The padded plane (padded row r, column c = input row r - pt, column c -
  // pl; the pad value outside the input) as sh * sw phases: phase (a, b) holds
  // padded rows a, a + sh, a + 2 sh, ... and columns b, b + sw, ..., as
  // PhaseRows() rows of PhaseCols() floats. Output (oy, ox)'s tap (ky, kx) is
  // then element (oy + ky dh / sh) * PhaseCols() + ox + kx dw / sw of phase
  // (ky dh % sh, kx dw % sw): at TapOffset(ky, kx) + oy * PhaseCols() + ox, so
  // a vector of outputs along a row (or, rows PhaseCols() apart, along the
  // plane read as one long row) reads each tap with one load. Each phase ends
  // with kStencilSlack floats of padding, so that a last partial vector may
  // load whole vectors.
  int64_t PhaseRows() const { return oh + (kh - 1) * dh / sh; }
  int64_t PhaseCols() const { return ow + (kw - 1) * dw / sw; }
  int64_t PhaseFloats() const { return PhaseRows() * PhaseCols() + kSlack; }
  int64_t PlaneFloats() const { return sh * sw * PhaseFloats(); }
  int64_t TapOffset(int64_t ky, int64_t kx) const {
    const int64_t y = ky * dh, x = kx * dw;
    return ((y % sh) * sw + x % sw) * PhaseFloats() + y / sh * PhaseCols() + x / sw;
  }

  static constexpr int64_t kSlack = 16;  // the widest vector, in floats
};

// What the kernels need of a shape, worked out once for all the planes of an
// op (divisions and tables that would otherwise be redone per plane).
struct StencilPlan {
  StencilShape shape;
  size_t channels = 1;  // input planes per output plane (PlaneFloats() apart)
  int64_t phase_rows = 0, phase_cols = 0, phase_floats = 0, plane_floats = 0;
  std::vector<int64_t> taps;     // tap (c, ky, kx)'s element from an output's position, in that order
  std::vector<int64_t> columns;  // tap column kx's offset within a row phase
  // PadPlane: the row and column phases some tap reads (a stride larger than
  // the kernel skips the others), and the phase elements [pad_lo, pad_hi) that
  // come from the input row (sw = 1, or both phases of sw = 2).
  std::vector<uint8_t> rows_used, cols_used;
  int64_t pad_lo = 0, pad_hi = 0;
};

StencilPlan PlanStencil(const StencilShape& s, size_t channels);

enum class StencilOp : uint8_t {
  kWeighted,  // init + sum over channels and taps of w * x (fused multiply-adds in (channel, ky, kx) order)
  kMax,       // max over taps; a NaN input wins
  kSum,       // init + sum over taps, then divided by divisor[oy * ow + ox] when given
};

// Writes one input plane (h x w, fp32 or fp16 at `in`) padded with `pad` into
// `padded` (PlaneFloats() floats), widened to fp32. Phases no tap reads (a
// stride larger than the kernel) are left unwritten.
void PadPlane(const StencilPlan& plan, const void* in, bool fp16, float pad, float* padded);

// Whether the padded plane stays close to the input's size. Kernels, pads,
// strides or dilations far larger than the input (attributes a client chooses)
// would make it huge; those shapes run StencilSkippingPadding instead.
bool PaddingIsCheap(const StencilShape& s);

// The stencil of one output plane (fp32, oh x ow) over `channels` unpadded fp32
// input planes, visiting only the taps inside the input: work bounded by the
// input, whatever the kernel. Same operation order as the Vector kernel, so
// the same results, except that a padded tap's weight is not multiplied by
// zero (an infinite weight there gives no NaN).
void StencilSkippingPadding(StencilOp op, const StencilShape& s, const float* const* planes, size_t channels,
                            const float* weights, float init, const float* divisor, float* out);

}  // namespace npu::kernels
