// The Cube: C = epilogue(op(A) x op(B) + bias), fp16 inputs, fp32 accumulation.
//
// The kernel is blocked the way a Da Vinci AI core moves data (DESIGN.md s.2)
// and the way BLIS splits a GEMM (its loop names in brackets):
//   cube_gemm.cc          the tiles of C (jc, ic) spread over the OpenMP team
//   cube_tile.cc          one m_tile x n_tile tile over all of K: MTE1 packing of
//                         A, k blocks (pc) with B packed or prefetched, FixPipe
//   cube_macro_kernel.cc  one k block of a tile: fractal columns (jr) x slivers
//                         of A rows (ir), one micro-kernel call each
//   cube_microkernel_*.cc the Cube itself: a register block of fp32 accumulators
//   cube_packed_b.cc      B packed once into whole-K fractal columns, shared by
//                         every tile (per call, or pre-packed constant weights)
//   cube_pack.cc          MTE1's layouts; fixpipe.cc the write-back
// The counts of that work are returned per tile, so the device model charges
// what really happened.
//
// Numerics: each product of two halves is exact in fp32; the sum over K runs in
// a fixed order per output element, so C is bitwise identical whatever the
// thread count, SIMD path, tile shape or whether B was pre-packed.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "kernels/cpu_features.h"
#include "kernels/elementwise_program.h"
#include "kernels/fp16.h"

namespace npu::kernels {

enum class ElemType { kFloat16, kFloat32 };

class PackedCubeB;  // cube_packed_b.h
class CubeASource;  // below

// Tile sizes in elements; multiples of 16 (the fractal edge). The defaults are
// the Ascend 910 tile (A and B slices of 128x256 fp16 fill L0A/L0B's 64 KiB; C
// 128x128 fp32 is 64 KiB of L0C). They also suit the host: the kernel blocks K
// and packs B for the host caches itself, so on the host a tile shape mostly
// decides load balance (128x128 gives >= 2 tiles per thread from 256^3 up).
struct CubeTileShape {
  int64_t m = 128;
  int64_t n = 128;
  int64_t k = 256;
};

// Work done for one output tile, counted as it happens.
struct CubeTileCounts {
  int64_t m0 = 0, n0 = 0;       // tile origin in C (within its batch)
  int64_t batch = 0;
  uint64_t fractal_ops = 0;     // 16x16x16 multiply-accumulates issued (Cube cycles)
  uint64_t mte2_bytes = 0;      // GM -> L1: A and B panels read
  uint64_t mte1_bytes = 0;      // L1 -> L0A/L0B: fractals laid out
  uint64_t fixpipe_bytes = 0;   // L0C -> GM: C written
  uint64_t k_steps = 0;         // k_tile slices (scalar loop iterations)
  // fp16 results saturated to +-65504 or made inf/NaN by FixPipe's cast; the
  // first tile also counts, in saturation mode, the operands MTE1 saturated.
  uint64_t overflow_elements = 0;
};

// Where element (r, j) of C (rows r < m, columns j < n of one batch) is stored.
//   kRowMajor      c[r * ldc + j]
//   kChannelMajor  c[(r / image_rows) * image_stride + j * image_rows + r % image_rows]:
//                  the rows are the pixels of consecutive images and the columns
//                  their channels, written as NCHW (a convolution's output).
enum class CubeOutputLayout { kRowMajor, kChannelMajor };

// An operand of a fused epilogue, read at each output element (r, j) of C:
//   kScalar     data[0]
//   kPerColumn  data[batch * batch_stride + j] (a bias, or a per-channel scale)
//   kLikeC      the element of a tensor laid out as C at the same position
//               (data + batch * batch_stride + the element's offset in C)
struct EpilogueOperand {
  enum class Kind : uint8_t { kScalar, kPerColumn, kLikeC };
  Kind kind = Kind::kScalar;
  const void* data = nullptr;
  ElemType type = ElemType::kFloat32;
  int64_t batch_stride = 0;  // elements
};

// FixPipe's fused epilogue: an elementwise program (elementwise_program.h)
// applied to each result after the bias, in fp32, before the single rounding
// to C's type. `in` is the result after the bias.
inline constexpr int kMaxEpilogueOperands = 4;
struct CubeEpilogue {
  const EwProgram* program = nullptr;
  std::vector<EpilogueOperand> operands;  // program->operands of them, <= kMaxEpilogueOperands
};

struct GemmProblem {
  int64_t batch = 1;
  int64_t m = 0, n = 0, k = 0;
  // A is m x k (k x m when trans_a), row-major with leading dimension lda.
  const void* a = nullptr;
  ElemType a_type = ElemType::kFloat16;  // fp32 is rounded to fp16 while packing, as an NPU does (saturate_fp16)
  int64_t lda = 0;
  bool trans_a = false;
  int64_t a_batch_stride = 0;  // elements; 0 broadcasts one A over the batch
  // Optional: packs op(A) itself instead of reading `a` (MTE1's img2col); the
  // fields of A above are then ignored.
  const CubeASource* a_source = nullptr;
  // B is k x n (n x k when trans_b).
  const void* b = nullptr;
  ElemType b_type = ElemType::kFloat16;
  int64_t ldb = 0;
  bool trans_b = false;
  int64_t b_batch_stride = 0;
  // Optional: B already packed (constant weights packed once, at plan time); the
  // fields of B above are then ignored. It must be k x n with 1 or `batch` batches.
  const PackedCubeB* packed_b = nullptr;
  // Optional fp32 bias of length n, added in fp32 before the epilogue.
  const float* bias = nullptr;
  int64_t bias_batch_stride = 0;  // elements between the biases of consecutive batches
  const CubeEpilogue* epilogue = nullptr;  // optional: after the bias, before the cast
  // C is m x n.
  void* c = nullptr;
  ElemType c_type = ElemType::kFloat32;
  CubeOutputLayout c_layout = CubeOutputLayout::kRowMajor;
  int64_t ldc = 0;           // kRowMajor
  int64_t c_image_rows = 0;  // kChannelMajor: rows (pixels) per image, > 0
  int64_t c_image_stride = 0;  // kChannelMajor: elements between images
  int64_t c_batch_stride = 0;
  // The float mode of every fp16 conversion of the call: the operands' rounding
  // (MTE1, cube_operand_rounding.h) and FixPipe's fp16 output. true: saturation
  // (Ascend 910: +-65504, NaN 0); false: inf_nan (IEEE). A pre-packed B must
  // have been packed in the same mode.
  bool saturate_fp16 = false;
  // The bench's GEMM (`npu compare`, kernels/exact_gemm.h): the operands as
  // given (fp32 stays fp32, no fp16 rounding), fp32 multiply-adds in K order,
  // then the same FixPipe; what a GPU's fp32 GEMM computes. A pre-packed B is
  // ignored (b must be set too, as every op sets it).
  bool exact_operands = false;
  // Optional: read before each tile; once true the remaining tiles are skipped
  // (C is left incomplete), so a run whose caller gave up frees the cores quickly.
  const std::atomic<bool>* cancel = nullptr;
};

// A source of op(A) that lays out its own rows (a convolution's img2col,
// kernels/cube_im2col.h). Called from inside the GEMM's parallel region, so
// Pack must not throw or allocate.
class CubeASource {
 public:
  virtual ~CubeASource() = default;
  // As PackCubeA (cube_pack.h): rows [m0, m0 + mt) of op(A) of `batch`, all k
  // columns, as fp32 values of fp16 roundings in the float mode (`saturate`:
  // cube_operand_rounding.h), in slivers of CubeSliverRows rows.
  virtual void Pack(int64_t batch, int64_t m0, int64_t mt, int64_t k, int mr, bool saturate, float* out) const = 0;
  // How many source values of op(A) (`batches` batches of m rows), each counted
  // once, saturation would hide: NaN, +-inf, or beyond fp16's range (fp16.h's
  // CountHalfOverflow). Called outside the parallel region.
  virtual uint64_t SaturatedOperands(int64_t batches, int64_t m) const = 0;
  // Rows [m0, m0 + mt) of op(A) of `batch`, all k columns, row-major, each
  // value as stored (no rounding): the bench's operand (exact_operands).
  virtual void ExactRows(int64_t batch, int64_t m0, int64_t mt, int64_t k, float* out) const = 0;
};

// Which host SIMD code runs the Cube's micro-kernel (SimdPath, cpu_features.h).
// All paths give bitwise identical results (same K order, fused multiply-add
// everywhere).
// Forces a path for the whole process (tests, benchmarks); kAuto restores the
// run-time choice. A path the CPU lacks falls back to the best one it has, so
// ActiveCubeSimdPath() tells what really runs.
void ForceCubeSimdPath(SimdPath path);
SimdPath ActiveCubeSimdPath();

// Runs the GEMM. `tiles`, when given, receives one entry per output tile in a
// fixed order (batch, then m0, then n0). Tiles run in parallel over the current
// OpenMP team. Throws std::bad_alloc (before any tile runs) when its per-thread
// buffers cannot be had; nothing is thrown from inside the parallel region.
void CubeGemm(const GemmProblem& p, const CubeTileShape& tile, std::vector<CubeTileCounts>* tiles);

}  // namespace npu::kernels
