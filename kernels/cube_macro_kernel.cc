#include "kernels/cube_macro_kernel.h"

#include <algorithm>

namespace npu::kernels {

BlockPrefetcher::BlockPrefetcher(const OperandView& b, int64_t n0, int64_t nt, int64_t k0, int64_t kc,
                                 int64_t steps) {
  const int64_t esize = b.type == ElemType::kFloat16 ? 2 : 4;
  // Memory rows of the block: k rows of n elements, or n rows of k when transposed.
  const int64_t first = b.trans ? n0 : k0, count = b.trans ? nt : kc;
  const int64_t offset = b.trans ? k0 : n0;
  base_ = static_cast<const char*>(b.base) + (first * b.ld + offset) * esize;
  row_bytes_ = (b.trans ? kc : nt) * esize;
  stride_ = b.ld * esize;
  rows_ = count;
  per_step_ = (count + steps - 1) / std::max<int64_t>(steps, 1);
}

int64_t CubeMacroKernelCalls(const CubeMicroKernelSet& ks, int64_t mt, int64_t panels) {
  return (panels + ks.np - 1) / ks.np * ((mt + ks.mr - 1) / ks.mr);
}

void CubeMacroKernel(const CubeMicroKernelSet& ks, const CubeMacroBlock& blk, BlockPrefetcher& next_b) {
  const bool accumulate = blk.k0 > 0;
  for (int64_t jr = 0; jr < blk.panels; jr += ks.np) {
    const int64_t np = std::min<int64_t>(ks.np, blk.panels - jr);
    const half_bits* b = blk.b + jr * blk.panel_stride;
    float* c = blk.l0c + jr * 16;
    for (int64_t ir = 0, rows = 0; ir < blk.mt; ir += rows) {
      rows = CubeSliverRows(blk.mt, ks.mr, ir);
      next_b.Step();
      // The next call's L0C block (one line per row and fractal column), so its
      // first FMAs do not wait on L2.
      const float* next_c = c + (ir + rows) * blk.ldc;
      const int64_t next_rows = std::min<int64_t>(ks.mr, blk.mt - ir - rows);
      for (int64_t r = 0; r < next_rows; ++r) {
        for (int64_t q = 0; q < np; ++q) __builtin_prefetch(next_c + r * blk.ldc + q * 16, 1, 3);
      }
      ks.fn[rows - 1][np - 1](blk.kc, blk.a + ir * blk.k + blk.k0 * rows, b, blk.panel_stride, c + ir * blk.ldc,
                              blk.ldc, accumulate);
    }
  }
}

}  // namespace npu::kernels
