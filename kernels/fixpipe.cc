#include "kernels/fixpipe.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace npu::kernels {

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

void FixPipeRow(const float* acc, int64_t n0, int64_t n, const FixPipeConfig& cfg, void* out) {
  const bool plain = cfg.bias == nullptr && cfg.epilogue == Epilogue::kNone;
  if (cfg.out_type == ElemType::kFloat32 && plain) {
    std::memcpy(out, acc, n * sizeof(float));
    return;
  }
  constexpr int64_t kChunk = 256;
  float tmp[kChunk];
  for (int64_t j0 = 0; j0 < n; j0 += kChunk) {
    const int64_t len = std::min(kChunk, n - j0);
    float* dst = cfg.out_type == ElemType::kFloat32 ? static_cast<float*>(out) + j0 : tmp;
    if (cfg.bias) {
      const float* bias = cfg.bias + n0 + j0;
      for (int64_t j = 0; j < len; ++j) dst[j] = acc[j0 + j] + bias[j];
    } else {
      std::memcpy(dst, acc + j0, len * sizeof(float));
    }
    if (cfg.epilogue == Epilogue::kRelu) {
      for (int64_t j = 0; j < len; ++j) dst[j] = dst[j] > 0.0f ? dst[j] : 0.0f;
    } else if (cfg.epilogue != Epilogue::kNone) {
      for (int64_t j = 0; j < len; ++j) dst[j] = ApplyEpilogue(dst[j], cfg.epilogue);
    }
    if (cfg.out_type == ElemType::kFloat16) {
      FloatToHalfN(tmp, static_cast<half_bits*>(out) + j0, len, cfg.saturate_fp16);
    }
  }
}

}  // namespace npu::kernels
