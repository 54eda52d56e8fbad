// Row-wise Vector math on contiguous fp32 rows: the softmax and normalisation
// steps that reduce along one axis and then rescale it. Each row is a UB-resident
// block; sums accumulate in fp32 in index order (deterministic).
#pragma once

#include <cstddef>

namespace npu::kernels {

// out = softmax(in) over n elements; log_softmax when `log`. Max-subtracted,
// so exp never overflows.
void SoftmaxRowF32(const float* in, float* out, size_t n, bool log);

// out = (in - mean) / sqrt(var + eps) * scale + bias, population variance;
// bias may be null. Writes the mean and 1/sqrt(var + eps) when asked.
void LayerNormRowF32(const float* in, const float* scale, const float* bias, float eps, float* out, size_t n,
                     float* mean_out, float* inv_std_out);

}  // namespace npu::kernels
