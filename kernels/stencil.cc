#include "kernels/stencil.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace npu::kernels {
namespace {

// The kernel taps [begin, end) of a window starting at `start` (stride of
// `dilation`) that land in [0, extent).
// ceil(a / b) for b > 0, 0 for a <= 0.
int64_t CeilDiv(int64_t a, int64_t b) { return a <= 0 ? 0 : (a + b - 1) / b; }

struct TapRange {
  int64_t begin = 0, end = 0;
};
TapRange TapsInside(int64_t start, int64_t kernel, int64_t dilation, int64_t extent) {
  TapRange r;
  r.begin = start >= 0 ? 0 : (-start + dilation - 1) / dilation;
  r.end = start >= extent ? 0 : std::min(kernel, (extent - 1 - start) / dilation + 1);
  r.end = std::max(r.end, r.begin);
  return r;
}

}  // namespace

bool PaddingIsCheap(const StencilShape& s) { return s.PlaneFloats() <= 4 * s.h * s.w + (int64_t{1} << 16); }

void StencilSkippingPadding(StencilOp op, const StencilShape& s, const float* const* planes, size_t channels,
                            const float* weights, float init, const float* divisor, float* out) {
  for (int64_t oy = 0; oy < s.oh; ++oy) {
    for (int64_t ox = 0; ox < s.ow; ++ox) {
      const int64_t y0 = oy * s.sh - s.pt, x0 = ox * s.sw - s.pl;
      const TapRange ys = TapsInside(y0, s.kh, s.dh, s.h), xs = TapsInside(x0, s.kw, s.dw, s.w);
      float acc = init;
      for (size_t c = 0; c < channels; ++c) {
        for (int64_t ky = ys.begin; ky < ys.end; ++ky) {
          const float* row = planes[c] + (y0 + ky * s.dh) * s.w;
          for (int64_t kx = xs.begin; kx < xs.end; ++kx) {
            const float v = row[x0 + kx * s.dw];
            switch (op) {
              case StencilOp::kWeighted:
                acc = std::fma(weights[(static_cast<int64_t>(c) * s.kh + ky) * s.kw + kx], v, acc);
                break;
              case StencilOp::kMax: acc = (v > acc || v != v) ? v : acc; break;
              case StencilOp::kSum: acc = acc + v; break;
            }
          }
        }
      }
      out[oy * s.ow + ox] = divisor != nullptr ? acc / divisor[oy * s.ow + ox] : acc;
    }
  }
}

void PadPlane(const StencilShape& s, const void* in, bool fp16, float pad, float* padded) {
  const int64_t rows = s.PaddedRows(), phase = s.PhaseLen(), cols = s.sw * phase;
  thread_local std::vector<float> row;
  row.resize(static_cast<size_t>(s.w));
  for (int64_t r = 0; r < rows; ++r) {
    float* dst = padded + r * cols;
    const int64_t iy = r - s.pt;
    if (iy < 0 || iy >= s.h) {
      std::fill(dst, dst + cols, pad);
      continue;
    }
    if (fp16) {
      HalfToFloatN(static_cast<const half_bits*>(in) + iy * s.w, row.data(), static_cast<size_t>(s.w));
    } else {
      const float* src = static_cast<const float*>(in) + iy * s.w;
      std::copy(src, src + s.w, row.begin());
    }
    if (s.sw == 1) {  // one phase: pad, the row, pad
      const int64_t lo = std::min(s.pl, cols), hi = std::min(s.pl + s.w, cols);
      std::fill(dst, dst + lo, pad);
      std::copy(row.begin(), row.begin() + (hi - lo), dst + lo);
      std::fill(dst + hi, dst + cols, pad);
      continue;
    }
    for (int64_t q = 0; q < s.sw; ++q) {  // phase q holds padded columns q, q + sw, q + 2 sw, ...
      // Element j is input column q - pl + sw j: inside the row for j in [lo, hi).
      const int64_t lo = std::min(phase, CeilDiv(s.pl - q, s.sw));
      const int64_t hi = std::max(lo, std::min(phase, CeilDiv(s.w + s.pl - q, s.sw)));
      float* d = dst + q * phase;
      std::fill(d, d + lo, pad);
      const float* src = row.data() + (q - s.pl);
      for (int64_t j = lo; j < hi; ++j) d[j] = src[s.sw * j];
      std::fill(d + hi, d + phase, pad);
    }
  }
}

}  // namespace npu::kernels
