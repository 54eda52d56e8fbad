// BLIS's macro-kernel for the Cube: one k block (kc deep) of one tile. For each
// jr (np fractal columns of B) and ir (one sliver of A rows) one micro-kernel
// call adds the block's products into the tile's L0C accumulators.
#pragma once

#include <cstdint>

#include "kernels/cube_microkernel.h"
#include "kernels/cube_pack.h"

namespace npu::kernels {

// Pulls the source rows of a B block that is packed later towards L2, a few lines
// per micro-kernel call: B's rows are far apart in memory and the hardware
// prefetcher leaves the packing waiting on L3. Default-constructed: does nothing.
class BlockPrefetcher {
 public:
  BlockPrefetcher() = default;
  // op(B) rows [k0, k0 + kc), columns [n0, n0 + nt), spread over `steps` Step()s.
  BlockPrefetcher(const OperandView& b, int64_t n0, int64_t nt, int64_t k0, int64_t kc, int64_t steps);
  void Step() {
    for (int64_t i = 0; i < per_step_ && next_ < rows_; ++i, ++next_) {
      const char* row = base_ + next_ * stride_;
      for (int64_t off = 0; off < row_bytes_; off += 64) __builtin_prefetch(row + off, 0, 2);
    }
  }

 private:
  const char* base_ = nullptr;
  int64_t row_bytes_ = 0, stride_ = 0, rows_ = 0, per_step_ = 0, next_ = 0;
};

struct CubeMacroBlock {
  int64_t mt = 0;                // rows of the tile
  int64_t panels = 0;            // fractal columns of the tile
  int64_t k = 0;                 // depth of the packed A (the sliver at row s0 starts at a + s0 * k)
  int64_t k0 = 0, kc = 0;        // this block: k in [k0, k0 + kc)
  const float* a = nullptr;      // the tile's packed A (PackCubeA)
  const half_bits* b = nullptr;  // the block's first fractal column, at k0
  int64_t panel_stride = 0;      // halves between B's fractal columns
  float* l0c = nullptr;          // mt x ldc accumulators
  int64_t ldc = 0;
};

// Micro-kernel calls this block makes (for spreading prefetches over them).
int64_t CubeMacroKernelCalls(const CubeMicroKernelSet& ks, int64_t mt, int64_t panels);

// Accumulates the block into L0C (overwriting it when k0 == 0).
void CubeMacroKernel(const CubeMicroKernelSet& ks, const CubeMacroBlock& blk, BlockPrefetcher& next_b);

}  // namespace npu::kernels
