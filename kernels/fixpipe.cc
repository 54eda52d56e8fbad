#include "kernels/fixpipe.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/cpu_features.h"

namespace npu::kernels {
namespace {

constexpr int64_t kChunk = 256;

// Where a run of `len` results lies, for the epilogue's operands.
struct Run {
  int64_t offset = 0;     // of the first result in the batch's C
  int64_t column = 0;     // of the first result
  bool one_column = false;  // the run goes down a column (channel-major C) instead of along a row
};

// An operand's values for the run, as fp32: a pointer into it, or `tmp` filled.
const float* OperandChunk(const EpilogueOperand& o, int64_t batch, const Run& run, int64_t len, float* tmp) {
  const int64_t base = batch * o.batch_stride;
  int64_t index = 0;
  bool broadcast = false;
  switch (o.kind) {
    case EpilogueOperand::Kind::kScalar: broadcast = true; break;
    case EpilogueOperand::Kind::kPerColumn:
      index = base + run.column;
      broadcast = run.one_column;
      break;
    case EpilogueOperand::Kind::kLikeC: index = base + run.offset; break;
  }
  if (broadcast) {
    const float v = o.type == ElemType::kFloat32 ? static_cast<const float*>(o.data)[index]
                                                 : HalfToFloat(static_cast<const half_bits*>(o.data)[index]);
    std::fill_n(tmp, len, v);
    return tmp;
  }
  if (o.type == ElemType::kFloat32) return static_cast<const float*>(o.data) + index;
  HalfToFloatN(static_cast<const half_bits*>(o.data) + index, tmp, static_cast<size_t>(len));
  return tmp;
}

// Bias, epilogue and cast of one contiguous run of `len` fp32 values in `vals`
// (modified), stored to `out`. `bias` is per element (stride 1) or one value
// for the run (stride 0).
uint64_t Finish(float* vals, int64_t len, const float* bias, int64_t bias_stride, const Run& run,
                const FixPipeConfig& cfg, void* out) {
  if (bias != nullptr) {
    for (int64_t j = 0; j < len; ++j) vals[j] += bias[j * bias_stride];
  }
  uint64_t overflow = 0;
  if (cfg.epilogue != nullptr) {
    float operand_tmp[kMaxEpilogueOperands][kChunk];
    const float* chunks[kMaxEpilogueOperands];
    const CubeEpilogue& e = *cfg.epilogue;
    for (size_t i = 0; i < e.operands.size(); ++i) {
      chunks[i] = OperandChunk(e.operands[i], cfg.batch, run, len, operand_tmp[i]);
    }
    float scratch[2 * kChunk];
    overflow += RunEwProgram(*e.program, vals, static_cast<size_t>(len), chunks, cfg.saturate_fp16, scratch);
  }
  overflow += CountOverflow(vals, static_cast<size_t>(len), cfg.out_type == ElemType::kFloat16);
  if (cfg.out_type == ElemType::kFloat16) {
    FloatToHalfN(vals, static_cast<half_bits*>(out), static_cast<size_t>(len), cfg.saturate_fp16);
  } else if (vals != out) {
    std::memcpy(out, vals, static_cast<size_t>(len) * sizeof(float));
  }
  return overflow;
}

// dst[j * dst_stride + i] = src[i * src_stride + j] for an 8 x 8 block, in
// registers (unpack, shuffle, lane permute): a data move, so every path
// leaves the same bits.
__attribute__((target("avx2"))) void Transpose8x8Avx2(const float* src, int64_t src_stride, float* dst,
                                                      int64_t dst_stride) {
  __m256 r[8], t[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(src + i * src_stride);
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    r[i] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int i = 0; i < 4; ++i) {
    _mm256_storeu_ps(dst + i * dst_stride, _mm256_permute2f128_ps(r[i], r[i + 4], 0x20));
    _mm256_storeu_ps(dst + (i + 4) * dst_stride, _mm256_permute2f128_ps(r[i], r[i + 4], 0x31));
  }
}

// tmp[j][i] = src[i * stride + j] for i < len, j < width (width <= 16).
void TransposeBlock(const float* src, int64_t stride, int64_t len, int64_t width, float (*tmp)[kChunk]) {
  int64_t i = 0;
  if (HostCpuFeatures().avx2) {
    for (; i + 8 <= len; i += 8) {
      int64_t j = 0;
      for (; j + 8 <= width; j += 8) Transpose8x8Avx2(src + i * stride + j, stride, &tmp[j][i], kChunk);
      for (; j < width; ++j) {
        for (int64_t r = i; r < i + 8; ++r) tmp[j][r] = src[r * stride + j];
      }
    }
  }
  for (; i < len; ++i) {
    for (int64_t j = 0; j < width; ++j) tmp[j][i] = src[i * stride + j];
  }
}

}  // namespace

uint64_t FixPipeRow(const float* acc, int64_t n0, int64_t n, int64_t offset, const FixPipeConfig& cfg, void* out) {
  if (cfg.out_type == ElemType::kFloat32 && cfg.bias == nullptr && cfg.epilogue == nullptr) {
    std::memcpy(out, acc, n * sizeof(float));
    return CountOverflow(acc, static_cast<size_t>(n), false);
  }
  const size_t out_size = cfg.out_type == ElemType::kFloat16 ? sizeof(half_bits) : sizeof(float);
  float tmp[kChunk];
  uint64_t overflow = 0;
  for (int64_t j0 = 0; j0 < n; j0 += kChunk) {
    const int64_t len = std::min(kChunk, n - j0);
    char* dst = static_cast<char*>(out) + j0 * static_cast<int64_t>(out_size);
    // fp32 output is finished in place; fp16 goes through the staging chunk.
    float* vals = cfg.out_type == ElemType::kFloat32 ? reinterpret_cast<float*>(dst) : tmp;
    std::memcpy(vals, acc + j0, static_cast<size_t>(len) * sizeof(float));
    const Run run{offset + j0, n0 + j0, false};
    overflow += Finish(vals, len, cfg.bias == nullptr ? nullptr : cfg.bias + n0 + j0, 1, run, cfg, dst);
  }
  return overflow;
}

uint64_t FixPipeColumns(const float* acc, int64_t acc_stride, int64_t rows, int64_t col0, int64_t cols,
                        int64_t offset, int64_t out_stride, const FixPipeConfig& cfg, void* out) {
  constexpr int64_t kBlock = 16;  // columns transposed together: one row of them is one cache line
  const int64_t out_size = cfg.out_type == ElemType::kFloat16 ? sizeof(half_bits) : sizeof(float);
  float tmp[kBlock][kChunk];
  uint64_t overflow = 0;
  for (int64_t i0 = 0; i0 < rows; i0 += kChunk) {
    const int64_t len = std::min(kChunk, rows - i0);
    for (int64_t j0 = 0; j0 < cols; j0 += kBlock) {
      const int64_t width = std::min(kBlock, cols - j0);
      TransposeBlock(acc + i0 * acc_stride + j0, acc_stride, len, width, tmp);
      for (int64_t j = 0; j < width; ++j) {
        const int64_t col = col0 + j0 + j, at = offset + (j0 + j) * out_stride + i0;
        const Run run{at, col, true};
        overflow += Finish(tmp[j], len, cfg.bias == nullptr ? nullptr : cfg.bias + col, 0, run, cfg,
                           static_cast<char*>(out) + ((j0 + j) * out_stride + i0) * out_size);
      }
    }
  }
  return overflow;
}

uint64_t FixPipeColumn(const float* acc, int64_t acc_stride, int64_t rows, int64_t col, int64_t offset,
                       const FixPipeConfig& cfg, void* out) {
  return FixPipeColumns(acc, acc_stride, rows, col, 1, offset, 0, cfg, out);
}

}  // namespace npu::kernels
