// Moving elements between a tensor's storage type and a Vector compute type
// (float for FLOAT16/FLOAT32, int32 or int64 for integer and bool tensors): the
// loads and stores around one UB chunk. Conversions follow ONNX Cast: float to
// integer truncates toward zero (out of range saturates, NaN gives 0: ONNX
// leaves both undefined, this is what the NPU's conversion does), integer to a
// narrower integer wraps (two's complement), anything to BOOL is "!= 0".
#pragma once

#include <cstdint>
#include <vector>
#include <type_traits>

#include "server/graph/broadcast.h"
#include "server/graph/host_tensor.h"

namespace npu::graph {

// dst[i] = element (offset + i*stride) of `t`, converted, for i < n; `stride`
// is 1 (consecutive elements) or 0 (element `offset` repeated), nothing else.
void LoadAsFloat(const HostTensor& t, int64_t offset, int64_t stride, int64_t n, float* dst);
// Every element of a tensor as fp32, in order.
std::vector<float> AsFloats(const HostTensor& t);
void LoadAsInt32(const HostTensor& t, int64_t offset, int64_t stride, int64_t n, int32_t* dst);
void LoadAsInt64(const HostTensor& t, int64_t offset, int64_t stride, int64_t n, int64_t* dst);

// Gathers output elements [start, start + n) of a broadcast input.
template <typename T>
void GatherBroadcast(const HostTensor& t, const BroadcastMap& map, int64_t start, int64_t n, T* dst) {
  map.ForEachRun(start, n, [&](int64_t out_start, int64_t in_offset, int64_t len, int64_t stride) {
    T* d = dst + (out_start - start);
    if constexpr (std::is_same_v<T, float>) {
      LoadAsFloat(t, in_offset, stride, len, d);
    } else if constexpr (std::is_same_v<T, int64_t>) {
      LoadAsInt64(t, in_offset, stride, len, d);
    } else {
      LoadAsInt32(t, in_offset, stride, len, d);
    }
  });
}

// Writes src[0, n) into elements [start, start + n) of `t`, converting; fp16
// results round to nearest even and, when `saturate`, clamp to +-65504.
// Returns how many float results overflowed (kernels/vector_kernels.h): what
// the op adds to its tile's overflow_elements.
uint64_t StoreFromFloat(const HostTensor& t, int64_t start, int64_t n, const float* src, bool saturate);
void StoreFromInt32(const HostTensor& t, int64_t start, int64_t n, const int32_t* src);
void StoreFromInt64(const HostTensor& t, int64_t start, int64_t n, const int64_t* src);

}  // namespace npu::graph
