// The Vector unit on the host: elementwise math, conversions, row and stencil
// kernels over fp32 or fp16 operands, written once (kernels/vector_*_body.h) and
// built per instruction set (vector_kernels_{avx512,avx2,portable}.cc), chosen at
// run time like the Cube's micro-kernel.
//
// Numerics (DESIGN.md): fp16 operands are widened on load, every kernel computes
// in fp32 and rounds once on store (round to nearest even); transcendentals use
// one polynomial and one operation order on every path, with fused multiply-add
// where the body says Fma and nowhere else, so all paths give the same bits for
// any input, thread count and tiling (NaN payloads excepted: any NaN is a NaN).
// Accuracy per function: docs/ops.md, "Vector math accuracy".
//
// Every kernel that stores results returns how many of them overflowed: an fp16
// result whose IEEE rounding is +-inf or NaN (stored as +-65504 and 0 when
// `saturate`, the Ascend 910's mode), or a non-finite fp32 result. That count is
// what raises the NPU's float-status flag.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/cpu_features.h"
#include "kernels/fp16.h"
#include "kernels/stencil.h"
#include "kernels/vector_math.h"

namespace npu::kernels {

// How an operand is stored in memory (UB); the Vector unit computes in fp32.
enum class Storage : uint8_t { kF32, kF16 };

// An input operand: `n` contiguous elements, or (broadcast) one element read for all.
struct VecSrc {
  const void* data = nullptr;
  Storage storage = Storage::kF32;
  bool broadcast = false;
};

struct VecDst {
  void* data = nullptr;
  Storage storage = Storage::kF32;
};

inline VecSrc F32Src(const float* p) { return {p, Storage::kF32, false}; }
inline VecSrc F16Src(const half_bits* p) { return {p, Storage::kF16, false}; }
inline VecDst F32Dst(float* p) { return {p, Storage::kF32}; }
inline VecDst F16Dst(half_bits* p) { return {p, Storage::kF16}; }

// Reductions of a row.
enum class ReduceKind : uint8_t { kSum, kMax, kMin };

// Statistics of a row: its mean and the sum of squared deviations from it.
struct Moments {
  double mean = 0;
  double m2 = 0;
};

// The softmax row kernel works in blocks of this many elements; its scratch
// holds the exponentials (when the output is fp16) and one max per block.
inline constexpr size_t kSoftmaxBlock = 256;
inline size_t SoftmaxScratchFloats(size_t n) { return n + n / kSoftmaxBlock + 1; }

// The kernels of one SIMD path. n is in elements; returns are overflow counts.
struct VectorKernelSet {
  SimdPath path = SimdPath::kPortable;

  // y[i] = op(x[i]).
  uint64_t (*unary)(UnaryOp op, const UnaryParams& params, VecSrc x, VecDst y, size_t n, bool saturate) = nullptr;
  // y[i] = op(a[i], b[i]); comparisons give 1.0f / 0.0f.
  uint64_t (*binary)(BinaryOp op, VecSrc a, VecSrc b, VecDst y, size_t n, bool saturate) = nullptr;
  // y[i] = cond[i] != 0 ? a[i] : b[i] (cond read as fp32 or fp16).
  uint64_t (*select)(VecSrc cond, VecSrc a, VecSrc b, VecDst y, size_t n, bool saturate) = nullptr;
  // Conversions: fp16 -> fp32 (exact) and fp32 -> fp16 (nearest even).
  void (*widen)(const half_bits* in, float* out, size_t n) = nullptr;
  uint64_t (*narrow)(const float* in, half_bits* out, size_t n, bool saturate) = nullptr;
  // Copies x to y converting the storage (fp32 -> fp32 counts non-finite values).
  uint64_t (*convert)(VecSrc x, VecDst y, size_t n, bool saturate) = nullptr;

  // Row kernels. Sums and statistics of a row use 64 partial accumulators
  // (element i in i mod 64) folded by one fixed tree, so they do not depend
  // on the vector width.
  // Sum, max or min of a row (any NaN: NaN). n = 0: 0, -inf, +inf.
  float (*reduce)(ReduceKind kind, VecSrc x, size_t n) = nullptr;
  // acc[j] = op(acc[j], x[j]): one more slice of a reduction over an outer axis.
  void (*reduce_into)(ReduceKind kind, VecSrc x, float* acc, size_t n) = nullptr;
  // Mean and M2 of a row by Welford's update per partial lane and Chan's
  // pairwise combination (in double): one pass, no cancellation.
  Moments (*moments)(VecSrc x, size_t n) = nullptr;
  // y = (x - mean) inv_std scale + bias (scale and bias contiguous or broadcast;
  // bias.data == nullptr: none).
  uint64_t (*normalize)(VecSrc x, VecDst y, size_t n, float mean, float inv_std, VecSrc scale, VecSrc bias,
                        bool saturate) = nullptr;
  // y = fma(x, a, b).
  uint64_t (*affine)(VecSrc x, VecDst y, size_t n, float a, float b, bool saturate) = nullptr;
  // Softmax (log: LogSoftmax) of a contiguous row: one online max/sum pass over
  // blocks of kSoftmaxBlock, then one write pass. scratch: SoftmaxScratchFloats(n).
  uint64_t (*softmax_row)(VecSrc x, VecDst y, size_t n, bool log, bool saturate, float* scratch) = nullptr;
  // `width` softmaxes of `len` elements side by side, element c of softmax j at
  // c * stride + j (an axis that is not the last); scratch: len * width floats.
  uint64_t (*softmax_columns)(VecSrc x, VecDst y, size_t len, size_t stride, size_t width, bool log, bool saturate,
                              float* scratch) = nullptr;

  // One output plane of a stencil (kernels/stencil.h) over plan.channels padded
  // input planes (PadPlane, plane_floats apart). kWeighted: weights[(c * kh + ky)
  // * kw + kx], starting from `init` (a bias); kSum starts from `init` and
  // divides by divisor[oy * ow + ox] when divisor is not null.
  uint64_t (*stencil)(StencilOp op, const StencilPlan& plan, const float* padded, const float* weights, float init,
                      const float* divisor, VecDst out, bool saturate) = nullptr;
  // PadPlane (kernels/stencil.h): the phase split is data movement only, the
  // same values on every path.
  void (*pad_plane)(const StencilPlan& plan, const void* in, bool fp16, float pad, float* padded) = nullptr;
};

// The set for the path that runs (ActiveVectorSimdPath()).
const VectorKernelSet& VectorKernels();
// The set of one path; only for a path the CPU can run (CpuCanRun).
const VectorKernelSet& VectorKernelsFor(SimdPath path);

// Forces a path for the whole process (tests, benchmarks); kAuto restores the
// run-time choice. A path the CPU lacks falls back to the best one it has.
void ForceVectorSimdPath(SimdPath path);
SimdPath ActiveVectorSimdPath();

}  // namespace npu::kernels
