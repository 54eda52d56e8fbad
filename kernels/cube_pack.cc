#include "kernels/cube_pack.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/cpu_features.h"
#include "kernels/cube_operand_rounding.h"

namespace npu::kernels {
namespace {

// Contiguous runs are converted in chunks that stay in L1.
constexpr int64_t kChunk = 256;

// n contiguous source elements -> fp16 bits (fp32 rounded in the float mode).
void RunToHalves(const void* base, ElemType type, int64_t idx, int64_t n, bool saturate, half_bits* out) {
  if (type == ElemType::kFloat16) {
    std::memcpy(out, static_cast<const half_bits*>(base) + idx, n * sizeof(half_bits));
  } else {
    CubeOperandHalves(static_cast<const float*>(base) + idx, out, n, saturate);
  }
}

// n contiguous source elements -> fp32 values of their fp16 rounding.
void RunToFloats(const void* base, ElemType type, int64_t idx, int64_t n, bool saturate, float* out) {
  if (type == ElemType::kFloat16) {
    HalfToFloatN(static_cast<const half_bits*>(base) + idx, out, n);
  } else {
    half_bits tmp[kChunk];
    CubeOperandHalves(static_cast<const float*>(base) + idx, tmp, n, saturate);
    HalfToFloatN(tmp, out, n);
  }
}

// A sliver (rows <= 16) from row-major fp16 or fp32 with F16C: 8 k at a time, the
// rows x 8 block is widened (fp32 input: rounded to fp16 and back), transposed in
// registers as up to two 8x8 blocks, and each k's `rows` values stored as whole
// vectors. A store spills past its k (by 8 - rows % 8 floats) into the next k,
// which the next store overwrites; the caller leaves 16 floats of slack at the end.
template <typename Src>
__attribute__((target("avx2,f16c"))) __m256 Load8Widened(const Src* p, bool saturate) {
  if constexpr (sizeof(Src) == 2) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  } else {
    return CubeOperand8(_mm256_loadu_ps(p), saturate);
  }
}

__attribute__((target("avx2,f16c"), always_inline)) inline void Transpose8x8(__m256 v[8]) {
  const __m256 t0 = _mm256_unpacklo_ps(v[0], v[1]), t1 = _mm256_unpackhi_ps(v[0], v[1]);
  const __m256 t2 = _mm256_unpacklo_ps(v[2], v[3]), t3 = _mm256_unpackhi_ps(v[2], v[3]);
  const __m256 t4 = _mm256_unpacklo_ps(v[4], v[5]), t5 = _mm256_unpackhi_ps(v[4], v[5]);
  const __m256 t6 = _mm256_unpacklo_ps(v[6], v[7]), t7 = _mm256_unpackhi_ps(v[6], v[7]);
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xee);
  const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xee);
  const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xee);
  const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xee);
  v[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
  v[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
  v[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
  v[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
  v[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
  v[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
  v[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
  v[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

template <typename Src>
__attribute__((target("avx2,f16c"))) void PackSliverF16c(const Src* src, int64_t ld, int64_t rows, int64_t k,
                                                          bool saturate, float* out) {
  const int64_t groups = (rows + 7) / 8;
  int64_t kk = 0;
  for (; kk + 8 <= k; kk += 8) {
    __m256 v[2][8];
    for (int64_t g = 0; g < groups; ++g) {
      for (int64_t r = 0; r < 8; ++r) {
        const int64_t row = g * 8 + r;
        v[g][r] = row < rows ? Load8Widened(src + row * ld + kk, saturate) : _mm256_setzero_ps();
      }
      Transpose8x8(v[g]);
    }
    for (int64_t j = 0; j < 8; ++j) {
      for (int64_t g = 0; g < groups; ++g) _mm256_storeu_ps(out + (kk + j) * rows + g * 8, v[g][j]);
    }
  }
  for (; kk < k; ++kk) {
    for (int64_t r = 0; r < rows; ++r) {
      const Src x = src[r * ld + kk];
      if constexpr (sizeof(Src) == 2) {
        out[kk * rows + r] = HalfToFloat(x);
      } else {
        out[kk * rows + r] = CubeOperand(x, saturate);
      }
    }
  }
}

// Transposes an 8x8 block of 16-bit elements (SSE2, baseline x86-64).
inline void Transpose8x8Epi16(__m128i r[8]) {
  const __m128i t0 = _mm_unpacklo_epi16(r[0], r[1]), t1 = _mm_unpackhi_epi16(r[0], r[1]);
  const __m128i t2 = _mm_unpacklo_epi16(r[2], r[3]), t3 = _mm_unpackhi_epi16(r[2], r[3]);
  const __m128i t4 = _mm_unpacklo_epi16(r[4], r[5]), t5 = _mm_unpackhi_epi16(r[4], r[5]);
  const __m128i t6 = _mm_unpacklo_epi16(r[6], r[7]), t7 = _mm_unpackhi_epi16(r[6], r[7]);
  const __m128i u0 = _mm_unpacklo_epi32(t0, t2), u1 = _mm_unpackhi_epi32(t0, t2);
  const __m128i u2 = _mm_unpacklo_epi32(t1, t3), u3 = _mm_unpackhi_epi32(t1, t3);
  const __m128i u4 = _mm_unpacklo_epi32(t4, t6), u5 = _mm_unpackhi_epi32(t4, t6);
  const __m128i u6 = _mm_unpacklo_epi32(t5, t7), u7 = _mm_unpackhi_epi32(t5, t7);
  r[0] = _mm_unpacklo_epi64(u0, u4);
  r[1] = _mm_unpackhi_epi64(u0, u4);
  r[2] = _mm_unpacklo_epi64(u1, u5);
  r[3] = _mm_unpackhi_epi64(u1, u5);
  r[4] = _mm_unpacklo_epi64(u2, u6);
  r[5] = _mm_unpackhi_epi64(u2, u6);
  r[6] = _mm_unpacklo_epi64(u3, u7);
  r[7] = _mm_unpackhi_epi64(u3, u7);
}

// Transposed fp16 B (weights stored n x k, as in a Linear layer): one fractal
// column (cols <= 16 source rows) 8 k at a time, as two 8x8 transposes; columns
// past `cols` are zero.
void PackTransposedPanelF16(const half_bits* src, int64_t ld, int64_t cols, int64_t kc, half_bits* out) {
  int64_t kk = 0;
  for (; kk + 8 <= kc; kk += 8) {
    __m128i v[2][8];
    for (int64_t c = 0; c < 16; ++c) {
      v[c / 8][c % 8] = c < cols ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + c * ld + kk))
                                 : _mm_setzero_si128();
    }
    Transpose8x8Epi16(v[0]);
    Transpose8x8Epi16(v[1]);
    for (int64_t i = 0; i < 8; ++i) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + (kk + i) * 16), v[0][i]);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + (kk + i) * 16 + 8), v[1][i]);
    }
  }
  for (; kk < kc; ++kk) {
    for (int64_t c = 0; c < 16; ++c) out[kk * 16 + c] = c < cols ? src[c * ld + kk] : 0;
  }
}

}  // namespace

int64_t CubeSliverRows(int64_t mt, int mr, int64_t s0) {
  const int64_t rem = mt % mr;
  const int64_t split = mt - rem - mr;  // start of the sliver merged with the remainder
  if (rem == 0 || 2 * rem >= mr || split < 0 || s0 < split) return std::min<int64_t>(mr, mt - s0);
  return s0 == split ? (mr + rem + 1) / 2 : (mr + rem) / 2;
}

void PackCubeA(const OperandView& a, int64_t m0, int64_t mt, int64_t k, int mr, bool saturate, float* out) {
  float tmp[kChunk];
  if (!a.trans && mr <= 16 && ActiveCubeSimdPath() != SimdPath::kPortable) {
    for (int64_t s0 = 0, rows = 0; s0 < mt; s0 += rows) {
      rows = CubeSliverRows(mt, mr, s0);
      if (a.type == ElemType::kFloat16) {
        PackSliverF16c(static_cast<const half_bits*>(a.base) + (m0 + s0) * a.ld, a.ld, rows, k, saturate,
                       out + s0 * k);
      } else {
        PackSliverF16c(static_cast<const float*>(a.base) + (m0 + s0) * a.ld, a.ld, rows, k, saturate,
                       out + s0 * k);
      }
    }
    return;
  }
  if (!a.trans) {
    // Rows are contiguous along k: convert a run of one row, scatter it down its sliver.
    for (int64_t s0 = 0, rows = 0; s0 < mt; s0 += rows) {
      rows = CubeSliverRows(mt, mr, s0);
      float* sliver = out + s0 * k;
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t row_idx = (m0 + s0 + r) * a.ld;
        for (int64_t k0 = 0; k0 < k; k0 += kChunk) {
          const int64_t n = std::min(kChunk, k - k0);
          RunToFloats(a.base, a.type, row_idx + k0, n, saturate, tmp);
          float* d = sliver + k0 * rows + r;
          for (int64_t i = 0; i < n; ++i) d[i * rows] = tmp[i];
        }
      }
    }
    return;
  }
  // Transposed A: for a fixed k the tile's rows are contiguous. Widen a run of whole
  // slivers (<= kChunk rows) at once, then copy each sliver's piece into place.
  for (int64_t g0 = 0, g1 = 0; g0 < mt; g0 = g1) {
    for (g1 = g0; g1 < mt && g1 - g0 + CubeSliverRows(mt, mr, g1) <= kChunk;) g1 += CubeSliverRows(mt, mr, g1);
    for (int64_t kk = 0; kk < k; ++kk) {
      RunToFloats(a.base, a.type, kk * a.ld + m0 + g0, g1 - g0, saturate, tmp);
      for (int64_t s0 = g0, rows = 0; s0 < g1; s0 += rows) {
        rows = CubeSliverRows(mt, mr, s0);
        std::memcpy(out + s0 * k + kk * rows, tmp + (s0 - g0), rows * sizeof(float));
      }
    }
  }
}

void PackCubeB(const OperandView& b, int64_t n0, int64_t nt, int64_t k0, int64_t kc, int64_t panel_stride,
               bool saturate, half_bits* out) {
  const int64_t panels = (nt + 15) / 16;
  const int64_t full = nt / 16;
  if (full < panels) std::memset(out + full * panel_stride, 0, kc * 16 * sizeof(half_bits));
  if (!b.trans && b.type == ElemType::kFloat16) {
    // The common case is a plain copy, 32 bytes per fractal row. Panel by panel so
    // the stores are sequential (k-row order sent 8 store streams to one L1 set),
    // and fixed-size so the copy is inlined (a libc call per 32 bytes cost a third
    // of the GEMM).
    const half_bits* src = static_cast<const half_bits*>(b.base) + k0 * b.ld + n0;
    for (int64_t p = 0; p < full; ++p) {
      half_bits* dst = out + p * panel_stride;
      const half_bits* col = src + p * 16;
      for (int64_t kk = 0; kk < kc; ++kk) std::memcpy(dst + kk * 16, col + kk * b.ld, 16 * sizeof(half_bits));
    }
    if (full < panels) {
      half_bits* dst = out + full * panel_stride;
      const half_bits* col = src + full * 16;
      for (int64_t kk = 0; kk < kc; ++kk) std::memcpy(dst + kk * 16, col + kk * b.ld, (nt - full * 16) * sizeof(half_bits));
    }
    return;
  }
  if (b.type == ElemType::kFloat16) {  // and transposed
    const half_bits* src = static_cast<const half_bits*>(b.base) + n0 * b.ld + k0;
    for (int64_t p = 0; p < panels; ++p) {
      PackTransposedPanelF16(src + p * 16 * b.ld, b.ld, std::min<int64_t>(16, nt - p * 16), kc, out + p * panel_stride);
    }
    return;
  }
  half_bits tmp[kChunk];
  if (!b.trans) {
    // Rows of B (fixed k) are contiguous along n: one run feeds 16 halves per panel.
    for (int64_t kk = 0; kk < kc; ++kk) {
      for (int64_t j0 = 0; j0 < nt; j0 += kChunk) {
        const int64_t n = std::min(kChunk, nt - j0);
        RunToHalves(b.base, b.type, (k0 + kk) * b.ld + n0 + j0, n, saturate, tmp);
        for (int64_t j = 0; j < n; j += 16) {
          const int64_t col = j0 + j;
          std::memcpy(out + col / 16 * panel_stride + kk * 16, tmp + j,
                      std::min<int64_t>(16, n - j) * sizeof(half_bits));
        }
      }
    }
    return;
  }
  // Transposed B: a column of op(B) is contiguous along k.
  for (int64_t j = 0; j < nt; ++j) {
    half_bits* panel = out + j / 16 * panel_stride + j % 16;
    const int64_t col_idx = (n0 + j) * b.ld + k0;
    for (int64_t i0 = 0; i0 < kc; i0 += kChunk) {
      const int64_t n = std::min(kChunk, kc - i0);
      RunToHalves(b.base, b.type, col_idx + i0, n, saturate, tmp);
      for (int64_t i = 0; i < n; ++i) panel[(i0 + i) * 16] = tmp[i];
    }
  }
}

uint64_t CountSaturatedOperands(const OperandView& x, int64_t rows, int64_t cols, int64_t batches,
                                int64_t batch_stride) {
  if (x.type != ElemType::kFloat32 || x.base == nullptr) return 0;
  // Stored as `lines` runs of `len` contiguous values.
  const int64_t lines = x.trans ? cols : rows, len = x.trans ? rows : cols;
  uint64_t count = 0;
  for (int64_t b = 0; b < batches; ++b) {
    const float* base = static_cast<const float*>(x.base) + b * batch_stride;
    for (int64_t l = 0; l < lines; ++l) count += CountHalfOverflow(base + l * x.ld, static_cast<size_t>(len));
  }
  return count;
}

}  // namespace npu::kernels
