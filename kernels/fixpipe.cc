#include "kernels/fixpipe.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace npu::kernels {
namespace {

constexpr int64_t kChunk = 256;

// Values that do not survive the store: NaN, inf and, for fp16, magnitudes that
// round past 65504 (from 65520 up, which round to inf or saturate).
uint64_t CountOverflow(const float* v, int64_t n, ElemType out) {
  const float limit = out == ElemType::kFloat16 ? 65520.0f : std::numeric_limits<float>::infinity();
  uint64_t count = 0;
  for (int64_t i = 0; i < n; ++i) count += !(std::fabs(v[i]) < limit);
  return count;
}

// Bias, activation and cast of one contiguous run of `len` fp32 values in
// `vals` (modified), stored to `out`. `bias` is per element (stride 1) or one
// value for the run (stride 0).
uint64_t Finish(float* vals, int64_t len, const float* bias, int64_t bias_stride, const FixPipeConfig& cfg,
                void* out) {
  if (bias != nullptr) {
    for (int64_t j = 0; j < len; ++j) vals[j] += bias[j * bias_stride];
  }
  if (cfg.epilogue == Epilogue::kRelu) {
    for (int64_t j = 0; j < len; ++j) vals[j] = vals[j] > 0.0f ? vals[j] : 0.0f;
  } else if (cfg.epilogue != Epilogue::kNone) {
    for (int64_t j = 0; j < len; ++j) vals[j] = ApplyEpilogue(vals[j], cfg.epilogue);
  }
  const uint64_t overflow = CountOverflow(vals, len, cfg.out_type);
  if (cfg.out_type == ElemType::kFloat16) {
    FloatToHalfN(vals, static_cast<half_bits*>(out), static_cast<size_t>(len), cfg.saturate_fp16);
  } else if (vals != out) {
    std::memcpy(out, vals, static_cast<size_t>(len) * sizeof(float));
  }
  return overflow;
}

}  // namespace

float ApplyEpilogue(float v, Epilogue e) {
  switch (e) {
    case Epilogue::kNone: return v;
    case Epilogue::kRelu: return v > 0.0f ? v : 0.0f;
    case Epilogue::kGeluErf: return 0.5f * v * (1.0f + std::erf(v * 0.70710678118654752f));
    case Epilogue::kGeluTanh:
      return 0.5f * v * (1.0f + std::tanh(0.79788456080286536f * (v + 0.044715f * v * v * v)));
  }
  return v;
}

uint64_t FixPipeRow(const float* acc, int64_t n0, int64_t n, const FixPipeConfig& cfg, void* out) {
  if (cfg.out_type == ElemType::kFloat32 && cfg.bias == nullptr && cfg.epilogue == Epilogue::kNone) {
    std::memcpy(out, acc, n * sizeof(float));
    return CountOverflow(acc, n, cfg.out_type);
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
    overflow += Finish(vals, len, cfg.bias == nullptr ? nullptr : cfg.bias + n0 + j0, 1, cfg, dst);
  }
  return overflow;
}

uint64_t FixPipeColumn(const float* acc, int64_t acc_stride, int64_t rows, int64_t col, const FixPipeConfig& cfg,
                       void* out) {
  const size_t out_size = cfg.out_type == ElemType::kFloat16 ? sizeof(half_bits) : sizeof(float);
  float tmp[kChunk];
  uint64_t overflow = 0;
  for (int64_t i0 = 0; i0 < rows; i0 += kChunk) {
    const int64_t len = std::min(kChunk, rows - i0);
    for (int64_t i = 0; i < len; ++i) tmp[i] = acc[(i0 + i) * acc_stride];
    overflow += Finish(tmp, len, cfg.bias == nullptr ? nullptr : cfg.bias + col, 0, cfg,
                       static_cast<char*>(out) + i0 * static_cast<int64_t>(out_size));
  }
  return overflow;
}

}  // namespace npu::kernels
