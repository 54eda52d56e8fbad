#include "kernels/cube_pack.h"

#include <algorithm>
#include <cstring>

namespace npu::kernels {
namespace {

// Contiguous runs are converted in chunks that stay in L1.
constexpr int64_t kChunk = 256;

// n contiguous source elements -> fp16 bits (fp32 rounded to nearest even).
void RunToHalves(const void* base, ElemType type, int64_t idx, int64_t n, half_bits* out) {
  if (type == ElemType::kFloat16) {
    std::memcpy(out, static_cast<const half_bits*>(base) + idx, n * sizeof(half_bits));
  } else {
    FloatToHalfN(static_cast<const float*>(base) + idx, out, n, /*saturate=*/false);
  }
}

// n contiguous source elements -> fp32 values of their fp16 rounding.
void RunToFloats(const void* base, ElemType type, int64_t idx, int64_t n, float* out) {
  if (type == ElemType::kFloat16) {
    HalfToFloatN(static_cast<const half_bits*>(base) + idx, out, n);
  } else {
    half_bits tmp[kChunk];
    FloatToHalfN(static_cast<const float*>(base) + idx, tmp, n, /*saturate=*/false);
    HalfToFloatN(tmp, out, n);
  }
}

}  // namespace

void PackCubeA(const OperandView& a, int64_t m0, int64_t mt, int64_t k, int mr, float* out) {
  float tmp[kChunk];
  if (!a.trans) {
    // Rows are contiguous along k: convert a run of one row, scatter it down its sliver.
    for (int64_t s0 = 0; s0 < mt; s0 += mr) {
      const int64_t rows = std::min<int64_t>(mr, mt - s0);
      float* sliver = out + s0 * k;
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t row_idx = (m0 + s0 + r) * a.ld;
        for (int64_t k0 = 0; k0 < k; k0 += kChunk) {
          const int64_t n = std::min(kChunk, k - k0);
          RunToFloats(a.base, a.type, row_idx + k0, n, tmp);
          float* d = sliver + k0 * rows + r;
          for (int64_t i = 0; i < n; ++i) d[i * rows] = tmp[i];
        }
      }
    }
    return;
  }
  // Transposed A: for a fixed k the tile's rows are contiguous.
  for (int64_t kk = 0; kk < k; ++kk) {
    for (int64_t i0 = 0; i0 < mt; i0 += kChunk) {
      const int64_t n = std::min(kChunk, mt - i0);
      RunToFloats(a.base, a.type, kk * a.ld + m0 + i0, n, tmp);
      for (int64_t i = 0; i < n; ++i) {
        const int64_t row = i0 + i, s0 = row / mr * mr;
        const int64_t rows = std::min<int64_t>(mr, mt - s0);
        out[s0 * k + kk * rows + (row - s0)] = tmp[i];
      }
    }
  }
}

void PackCubeB(const OperandView& b, int64_t n0, int64_t nt, int64_t k0, int64_t kc, int64_t panel_stride,
               half_bits* out) {
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
  half_bits tmp[kChunk];
  if (!b.trans) {
    // Rows of B (fixed k) are contiguous along n: one run feeds 16 halves per panel.
    for (int64_t kk = 0; kk < kc; ++kk) {
      for (int64_t j0 = 0; j0 < nt; j0 += kChunk) {
        const int64_t n = std::min(kChunk, nt - j0);
        RunToHalves(b.base, b.type, (k0 + kk) * b.ld + n0 + j0, n, tmp);
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
      RunToHalves(b.base, b.type, col_idx + i0, n, tmp);
      for (int64_t i = 0; i < n; ++i) panel[(i0 + i) * 16] = tmp[i];
    }
  }
}

}  // namespace npu::kernels
