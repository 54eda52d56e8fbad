// The work one output tile of a Cube GEMM does, from its shape alone. The
// kernel records it for every tile it computes (CubeGemm's `tiles`), and the
// device model uses the same function for shapes too large to compute in a
// test, so the model never charges a separate estimate.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/cube_gemm.h"

namespace npu::kernels {

// Tile at (m0, n0) of size mt x nt over all of p.k: fractal MACs issued, A and
// B panels read from GM (MTE2), fractals laid into L0A/L0B (MTE1), C written
// by FixPipe, and the number of k_tile slices the tile loops over.
inline CubeTileCounts CountCubeTile(const GemmProblem& p, const CubeTileShape& tile, int64_t batch, int64_t m0,
                                    int64_t mt, int64_t n0, int64_t nt) {
  auto ceil_div = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  const int64_t fm = ceil_div(mt, 16), fn = ceil_div(nt, 16), fk = ceil_div(p.k, 16);
  CubeTileCounts c;
  c.batch = batch;
  c.m0 = m0;
  c.n0 = n0;
  c.fractal_ops = static_cast<uint64_t>(fm * fn * fk);
  c.mte2_bytes = static_cast<uint64_t>((mt + nt) * p.k * 2);  // fp16 panels
  c.mte1_bytes = static_cast<uint64_t>((fm + fn) * fk * 512);  // 512 B per 16x16 fp16 fractal
  c.fixpipe_bytes = static_cast<uint64_t>(mt * nt * (p.c_type == ElemType::kFloat32 ? 4 : 2));
  c.k_steps = static_cast<uint64_t>(ceil_div(p.k, tile.k));
  return c;
}

// Every tile of the problem, in CubeGemm's order (batch, then m0, then n0),
// without computing anything: only p.batch, m, n, k and c_type are read.
inline std::vector<CubeTileCounts> CountCubeTiles(const GemmProblem& p, const CubeTileShape& tile) {
  std::vector<CubeTileCounts> tiles;
  if (p.m <= 0 || p.n <= 0) return tiles;
  const int64_t tm = (p.m + tile.m - 1) / tile.m, tn = (p.n + tile.n - 1) / tile.n;
  tiles.reserve(static_cast<size_t>(p.batch * tm * tn));
  for (int64_t t = 0; t < p.batch * tm * tn; ++t) {
    const int64_t batch = t / (tm * tn);
    const int64_t m0 = (t / tn % tm) * tile.m, n0 = (t % tn) * tile.n;
    tiles.push_back(CountCubeTile(p, tile, batch, m0, std::min(tile.m, p.m - m0), n0, std::min(tile.n, p.n - n0)));
  }
  return tiles;
}

}  // namespace npu::kernels
