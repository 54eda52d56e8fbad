#include "kernels/vector_rows.h"

#include <cmath>

namespace npu::kernels {

void SoftmaxRowF32(const float* in, float* out, size_t n, bool log) {
  if (n == 0) return;
  float max = in[0];
  for (size_t i = 1; i < n; ++i) max = in[i] > max ? in[i] : max;
  float sum = 0.0f;
  if (log) {
    for (size_t i = 0; i < n; ++i) sum += std::exp(in[i] - max);
    const float shift = max + std::log(sum);
    for (size_t i = 0; i < n; ++i) out[i] = in[i] - shift;
    return;
  }
  for (size_t i = 0; i < n; ++i) {
    out[i] = std::exp(in[i] - max);
    sum += out[i];
  }
  const float inv = 1.0f / sum;
  for (size_t i = 0; i < n; ++i) out[i] *= inv;
}

void LayerNormRowF32(const float* in, const float* scale, const float* bias, float eps, float* out, size_t n,
                     float* mean_out, float* inv_std_out) {
  // Two passes (mean, then centred squares): the one-pass E[x^2]-E[x]^2 form
  // cancels catastrophically when |mean| >> std.
  float sum = 0.0f;
  for (size_t i = 0; i < n; ++i) sum += in[i];
  const float mean = n ? sum / static_cast<float>(n) : 0.0f;
  float sq = 0.0f;
  for (size_t i = 0; i < n; ++i) {
    const float d = in[i] - mean;
    sq += d * d;
  }
  const float var = n ? sq / static_cast<float>(n) : 0.0f;
  const float inv_std = 1.0f / std::sqrt(var + eps);
  if (bias) {
    for (size_t i = 0; i < n; ++i) out[i] = (in[i] - mean) * inv_std * scale[i] + bias[i];
  } else {
    for (size_t i = 0; i < n; ++i) out[i] = (in[i] - mean) * inv_std * scale[i];
  }
  if (mean_out) *mean_out = mean;
  if (inv_std_out) *inv_std_out = inv_std;
}

}  // namespace npu::kernels
