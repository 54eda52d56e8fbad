#include "kernels/cube_transposed_im2col.h"

#include <algorithm>

#include "kernels/cube_microkernel.h"
#include "kernels/cube_operand_rounding.h"
#include "kernels/cube_pack.h"
#include "kernels/fp16.h"

namespace npu::kernels {
namespace {

inline float Operand(half_bits v, bool /*saturate: a half is an operand already*/) { return HalfToFloat(v); }
inline float Operand(float v, bool saturate) { return CubeOperand(v, saturate); }

template <typename Src>
void PackSliver(const Src* planes, const Im2ColGeometry& g, int64_t first_pixel, int64_t rows, bool saturate,
                float* out) {
  // Each row's image, output plane, row and column; and, per (kz, ky), its
  // input plane and row (or -1).
  int64_t image[kCubeMaxMr], oz[kCubeMaxMr], oy[kCubeMaxMr], ox[kCubeMaxMr], iz[kCubeMaxMr], iy[kCubeMaxMr];
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t m = first_pixel + r;
    image[r] = m / g.pixels();
    oz[r] = (m % g.pixels()) / (g.oh * g.ow);
    oy[r] = m / g.ow % g.oh;
    ox[r] = m % g.ow;
  }
  const int64_t volume = g.volume();
  int64_t kk = 0;
  for (int64_t c = 0; c < g.channels; ++c) {
    for (int64_t kz = 0; kz < g.kd; ++kz) {
      for (int64_t r = 0; r < rows; ++r) iz[r] = TransposedSourceIndex(oz[r], kz, g.pf, g.sd, g.dd, g.d);
      for (int64_t ky = 0; ky < g.kh; ++ky) {
        for (int64_t r = 0; r < rows; ++r) iy[r] = TransposedSourceIndex(oy[r], ky, g.pt, g.sh, g.dh, g.h);
        for (int64_t kx = 0; kx < g.kw; ++kx, ++kk) {
          float* dst = out + kk * rows;
          for (int64_t r = 0; r < rows; ++r) {
            const int64_t ix = TransposedSourceIndex(ox[r], kx, g.pl, g.sw, g.dw, g.w);
            dst[r] = iz[r] < 0 || iy[r] < 0 || ix < 0
                         ? 0.0f
                         : Operand(planes[image[r] * g.image_stride + c * volume + (iz[r] * g.h + iy[r]) * g.w + ix],
                                   saturate);
          }
        }
      }
    }
  }
}

}  // namespace

void PackTransposedIm2Col(const void* input, ElemType type, const Im2ColGeometry& g, int64_t group, int64_t m0,
                          int64_t mt, int64_t k, int mr, bool saturate, float* out) {
  for (int64_t s0 = 0, rows = 0; s0 < mt; s0 += rows) {
    rows = CubeSliverRows(mt, mr, s0);
    if (type == ElemType::kFloat16) {
      PackSliver(static_cast<const half_bits*>(input) + group * g.group_stride, g, m0 + s0, rows, saturate,
                 out + s0 * k);
    } else {
      PackSliver(static_cast<const float*>(input) + group * g.group_stride, g, m0 + s0, rows, saturate,
                 out + s0 * k);
    }
  }
}

}  // namespace npu::kernels
