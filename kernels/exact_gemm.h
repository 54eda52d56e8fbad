// The bench's GEMM for `npu compare` (GemmProblem::exact_operands): what a GPU's
// fp32 GEMM computes, beside the Cube's. The operands are read as stored (fp32
// values keep every bit, fp16 ones widen exactly), each result is a chain of
// fp32 fused multiply-adds in K order, and FixPipe writes it back as the Cube's
// path does (bias, epilogue, cast, overflow count). None of the Cube's packing,
// fp16 operand rounding or fractal layout is involved: the difference between
// the two runs of one graph is the device's arithmetic and nothing else.
#pragma once

#include <vector>

#include "kernels/cube_gemm.h"

namespace npu::kernels {

// Runs p with exact operands. `tiles`, when given, gets the Cube's counts for
// the same tile shape (the device model's work is the same GEMM); the results'
// overflow count is the first tile's. Throws std::bad_alloc before computing
// anything when its operand copies cannot be had.
void ExactGemm(const GemmProblem& p, const CubeTileShape& tile, std::vector<CubeTileCounts>* tiles);

}  // namespace npu::kernels
