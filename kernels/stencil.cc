#include "kernels/stencil.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/taps_inside.h"
#include "kernels/vector_kernels.h"

namespace npu::kernels {

bool PaddingIsCheap(const StencilShape& s) {
  // In double: strides and dilations a client sets may overflow int64 products.
  const double rows = static_cast<double>(s.oh) + static_cast<double>(s.kh - 1) * s.dh / s.sh;
  const double cols = static_cast<double>(s.ow) + static_cast<double>(s.kw - 1) * s.dw / s.sw;
  const double plane = static_cast<double>(s.sh) * s.sw * (rows * cols + StencilShape::kSlack);
  return plane <= 4.0 * s.h * s.w + 65536.0;
}

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

StencilPlan PlanStencil(const StencilShape& s, size_t channels) {
  StencilPlan plan;
  plan.shape = s;
  plan.channels = channels;
  plan.phase_rows = s.PhaseRows();
  plan.phase_cols = s.PhaseCols();
  plan.phase_floats = s.PhaseFloats();
  plan.plane_floats = s.PlaneFloats();
  plan.rows_used.assign(static_cast<size_t>(s.sh), 0);
  plan.cols_used.assign(static_cast<size_t>(s.sw), 0);
  std::vector<int64_t> rows(static_cast<size_t>(s.kh));
  for (int64_t ky = 0; ky < s.kh; ++ky) {
    const int64_t y = ky * s.dh;
    rows[ky] = (y % s.sh) * s.sw * plan.phase_floats + y / s.sh * plan.phase_cols;
    plan.rows_used[y % s.sh] = 1;
  }
  plan.columns.resize(static_cast<size_t>(s.kw));
  for (int64_t kx = 0; kx < s.kw; ++kx) {
    const int64_t x = kx * s.dw;
    plan.columns[kx] = (x % s.sw) * plan.phase_floats + x / s.sw;
    plan.cols_used[x % s.sw] = 1;
  }
  plan.taps.reserve(channels * static_cast<size_t>(s.kh * s.kw));
  for (size_t c = 0; c < channels; ++c) {
    for (int64_t ky = 0; ky < s.kh; ++ky) {
      for (int64_t kx = 0; kx < s.kw; ++kx) {
        plan.taps.push_back(static_cast<int64_t>(c) * plan.plane_floats + rows[ky] + plan.columns[kx]);
      }
    }
  }
  const int64_t p = plan.phase_cols;
  if (s.sw == 1) {
    plan.pad_lo = std::min(s.pl, p), plan.pad_hi = std::min(s.pl + s.w, p);
  } else {  // element j of phases 0 and 1 reads input columns 2 j - pl and 2 j + 1 - pl
    plan.pad_lo = std::min(p, (s.pl + 1) / 2), plan.pad_hi = std::max(plan.pad_lo, std::min(p, (s.w + s.pl) / 2));
  }
  return plan;
}

void PadPlane(const StencilPlan& plan, const void* in, bool fp16, float pad, float* padded) {
  VectorKernels().pad_plane(plan, in, fp16, pad, padded);
}

}  // namespace npu::kernels
