#include "kernels/exact_gemm.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/cube_tile.h"
#include "kernels/cpu_features.h"
#include "kernels/cube_tile_counts.h"
#include "kernels/fp16.h"
#include "kernels/openmp.h"

namespace npu::kernels {
namespace {

float Load(const void* base, ElemType type, int64_t index) {
  if (type == ElemType::kFloat16) return HalfToFloat(static_cast<const half_bits*>(base)[index]);
  return static_cast<const float*>(base)[index];
}

// op(X) of one batch (rows x cols, stored with leading dimension ld, transposed
// when `trans`) as a dense row-major fp32 matrix.
void Dense(const void* base, ElemType type, int64_t ld, bool trans, int64_t rows, int64_t cols, float* out) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) out[r * cols + c] = Load(base, type, trans ? c * ld + r : r * ld + c);
  }
}

const void* BatchBase(const void* base, ElemType type, int64_t batch, int64_t stride) {
  const int64_t size = type == ElemType::kFloat16 ? sizeof(half_bits) : sizeof(float);
  return static_cast<const char*>(base) + batch * stride * size;
}

// Rows per block of C: FixPipe writes a block at once, from one buffer.
constexpr int64_t kRowsPerBlock = 16;

// c (mt x n) = a (mt x k, row-major) x b (k x n): each element a chain of fused
// multiply-adds in K order, vectorised over the columns.
__attribute__((always_inline)) inline void MultiplyBody(const float* a, const float* b, int64_t mt, int64_t k,
                                                        int64_t n, float* c) {
  std::fill_n(c, mt * n, 0.0f);
  for (int64_t i = 0; i < mt; ++i) {
    float* ci = c + i * n;
    for (int64_t kk = 0; kk < k; ++kk) {
      const float x = a[i * k + kk];
      const float* bk = b + kk * n;
      for (int64_t j = 0; j < n; ++j) ci[j] = std::fma(x, bk[j], ci[j]);
    }
  }
}
__attribute__((target("avx2,fma"))) void MultiplyFma(const float* a, const float* b, int64_t mt, int64_t k, int64_t n,
                                                     float* c) {
  MultiplyBody(a, b, mt, k, n, c);
}
void MultiplyPortable(const float* a, const float* b, int64_t mt, int64_t k, int64_t n, float* c) {
  MultiplyBody(a, b, mt, k, n, c);  // std::fma from the C library: the same bits, slower
}

}  // namespace

void ExactGemm(const GemmProblem& p, const CubeTileShape& tile, std::vector<CubeTileCounts>* tiles) {
  if (tiles != nullptr) *tiles = CountCubeTiles(p, tile);
  if (p.m == 0 || p.n == 0) return;
  std::vector<float> a(static_cast<size_t>(p.m * p.k)), b(static_cast<size_t>(p.k * p.n));
  const int threads = std::max(1, omp_get_max_threads());
  std::vector<float> acc(static_cast<size_t>(threads) * kRowsPerBlock * static_cast<size_t>(p.n));
  const int64_t blocks = (p.m + kRowsPerBlock - 1) / kRowsPerBlock;
  const auto multiply = CpuCanRun(SimdPath::kAvx2) ? MultiplyFma : MultiplyPortable;
  uint64_t overflow = 0;
  for (int64_t batch = 0; batch < p.batch; ++batch) {
    if (p.cancel != nullptr && p.cancel->load(std::memory_order_relaxed)) return;
    if (p.a_source != nullptr) {
      p.a_source->ExactRows(batch, 0, p.m, p.k, a.data());
    } else if (batch == 0 || p.a_batch_stride != 0) {
      Dense(BatchBase(p.a, p.a_type, batch, p.a_batch_stride), p.a_type, p.lda, p.trans_a, p.m, p.k, a.data());
    }
    if (batch == 0 || p.b_batch_stride != 0) {
      Dense(BatchBase(p.b, p.b_type, batch, p.b_batch_stride), p.b_type, p.ldb, p.trans_b, p.k, p.n, b.data());
    }
#pragma omp parallel for num_threads(threads) schedule(static) reduction(+ : overflow)
    for (int64_t blk = 0; blk < blocks; ++blk) {
      float* c = acc.data() + static_cast<size_t>(omp_get_thread_num()) * kRowsPerBlock * p.n;
      const int64_t m0 = blk * kRowsPerBlock, mt = std::min(kRowsPerBlock, p.m - m0);
      multiply(a.data() + m0 * p.k, b.data(), mt, p.k, p.n, c);
      overflow += CubeWriteBack(p, c, p.n, batch, m0, mt, 0, p.n);
    }
  }
  if (tiles != nullptr && !tiles->empty()) (*tiles)[0].overflow_elements = overflow;
}

}  // namespace npu::kernels
