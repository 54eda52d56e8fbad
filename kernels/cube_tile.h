// One output tile of a Cube GEMM (the body of BLIS's jc/ic loops): MTE1 packs
// the tile's rows of A once (or takes them from the same thread's previous tile
// of the row), the pc loop walks K in host-sized blocks, each block's B either
// read from the shared packed B or packed just before use, the macro-kernel
// accumulates into L0C, and FixPipe writes the tile back with bias, activation
// and cast.
#pragma once

#include <cstdint>

#include "kernels/cube_gemm.h"
#include "kernels/cube_microkernel.h"
#include "kernels/cube_packed_b.h"
#include "kernels/cube_workspace.h"

namespace npu::kernels {

// What every tile of one CubeGemm call shares.
struct CubeCall {
  const GemmProblem* p = nullptr;
  const CubeMicroKernelSet* kernels = nullptr;
  uint64_t id = 0;     // distinguishes calls, for the reuse of a thread's packed A
  SharedBPanels b;     // b.data null: each tile packs its own B blocks
};

// Host blocking of K inside a tile: a B block of kCubeKc x 32 halves (16 KiB)
// stays in L1 while A slivers stream from L2. It only decides where the fp32
// accumulators are parked in L0C between k blocks (an exact store and reload),
// never the order of the sum, so it is free to differ from the simulated tile.k.
inline constexpr int64_t kCubeKc = 256;

// Elements each thread's buffers need for the tiles of an m x n x k GEMM.
struct CubeTileBufferSizes {
  size_t a_floats = 0, b_halves = 0, c_floats = 0;
};
CubeTileBufferSizes TileBufferSizes(const CubeTileShape& tile, int64_t m, int64_t n, int64_t k);

// Computes C[m0:m0+mt, n0:n0+nt] of `batch` with one thread's buffers (sized by
// TileBufferSizes). Returns the overflow count of its results.
// FixPipe of a tile's accumulators (l0c, rows ldc apart) into C, in C's
// layout, with the bias, epilogue and cast; returns its overflow count.
uint64_t CubeWriteBack(const GemmProblem& p, const float* l0c, int64_t ldc, int64_t batch, int64_t m0, int64_t mt,
                       int64_t n0, int64_t nt);

uint64_t RunCubeTile(const CubeCall& call, CubeThreadBuffers& buf, int64_t batch, int64_t m0, int64_t mt, int64_t n0,
                     int64_t nt);

}  // namespace npu::kernels
