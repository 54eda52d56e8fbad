#include "server/graph/element_access.h"

#include <cmath>
#include <limits>

#include "kernels/fp16.h"

namespace npu::graph {
namespace {

template <typename Src, typename Dst>
void StridedCopy(const Src* src, int64_t stride, int64_t n, Dst* dst) {
  if (stride == 0) {
    const Dst v = static_cast<Dst>(src[0]);
    for (int64_t i = 0; i < n; ++i) dst[i] = v;
  } else {
    for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<Dst>(src[i]);
  }
}

// Float to int32 as ONNX Cast does on the NPU: truncate toward zero, saturate
// out-of-range values, NaN to 0.
int32_t FloatToInt32(float v) {
  if (std::isnan(v)) return 0;
  if (v >= 2147483647.0f) return std::numeric_limits<int32_t>::max();
  if (v <= -2147483648.0f) return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(v);
}

}  // namespace

void LoadAsFloat(const HostTensor& t, int64_t offset, int64_t stride, int64_t n, float* dst) {
  switch (t.type().dtype) {
    case v1::FLOAT16: {
      const auto* src = t.as<kernels::half_bits>() + offset;
      if (stride == 1) {
        kernels::HalfToFloatN(src, dst, static_cast<size_t>(n));
      } else {
        const float v = kernels::HalfToFloat(src[0]);
        for (int64_t i = 0; i < n; ++i) dst[i] = v;
      }
      return;
    }
    case v1::FLOAT32: return StridedCopy(t.as<float>() + offset, stride, n, dst);
    case v1::INT32: return StridedCopy(t.as<int32_t>() + offset, stride, n, dst);
    case v1::INT8: return StridedCopy(t.as<int8_t>() + offset, stride, n, dst);
    case v1::BOOL: return StridedCopy(t.as<uint8_t>() + offset, stride, n, dst);
    case v1::INT64: return StridedCopy(t.as<int64_t>() + offset, stride, n, dst);
    default: return;
  }
}

void LoadAsInt32(const HostTensor& t, int64_t offset, int64_t stride, int64_t n, int32_t* dst) {
  switch (t.type().dtype) {
    case v1::FLOAT16:
    case v1::FLOAT32: {
      float tmp[256];
      for (int64_t done = 0; done < n; done += 256) {
        const int64_t len = std::min<int64_t>(256, n - done);
        LoadAsFloat(t, offset + done * stride, stride, len, tmp);
        for (int64_t i = 0; i < len; ++i) dst[done + i] = FloatToInt32(tmp[i]);
      }
      return;
    }
    case v1::INT32: return StridedCopy(t.as<int32_t>() + offset, stride, n, dst);
    case v1::INT8: return StridedCopy(t.as<int8_t>() + offset, stride, n, dst);
    case v1::BOOL: return StridedCopy(t.as<uint8_t>() + offset, stride, n, dst);
    case v1::INT64: return StridedCopy(t.as<int64_t>() + offset, stride, n, dst);  // wraps, as a cast does
    default: return;
  }
}

void StoreFromFloat(const HostTensor& t, int64_t start, int64_t n, const float* src, bool saturate) {
  switch (t.type().dtype) {
    case v1::FLOAT16:
      kernels::FloatToHalfN(src, t.mutable_as<kernels::half_bits>() + start, static_cast<size_t>(n), saturate);
      return;
    case v1::FLOAT32: {
      float* d = t.mutable_as<float>() + start;
      for (int64_t i = 0; i < n; ++i) d[i] = src[i];
      return;
    }
    case v1::INT32: {
      int32_t* d = t.mutable_as<int32_t>() + start;
      for (int64_t i = 0; i < n; ++i) d[i] = FloatToInt32(src[i]);
      return;
    }
    case v1::INT8: {
      int8_t* d = t.mutable_as<int8_t>() + start;
      for (int64_t i = 0; i < n; ++i) d[i] = static_cast<int8_t>(std::clamp(FloatToInt32(src[i]), -128, 127));
      return;
    }
    case v1::BOOL: {
      uint8_t* d = t.mutable_as<uint8_t>() + start;
      for (int64_t i = 0; i < n; ++i) d[i] = src[i] != 0.0f;
      return;
    }
    case v1::INT64: {
      int64_t* d = t.mutable_as<int64_t>() + start;
      for (int64_t i = 0; i < n; ++i) d[i] = FloatToInt32(src[i]);
      return;
    }
    default: return;
  }
}

void StoreFromInt32(const HostTensor& t, int64_t start, int64_t n, const int32_t* src) {
  switch (t.type().dtype) {
    case v1::FLOAT16:
    case v1::FLOAT32: {
      float tmp[256];
      for (int64_t done = 0; done < n; done += 256) {
        const int64_t len = std::min<int64_t>(256, n - done);
        for (int64_t i = 0; i < len; ++i) tmp[i] = static_cast<float>(src[done + i]);
        StoreFromFloat(t, start + done, len, tmp, false);
      }
      return;
    }
    case v1::INT32: {
      int32_t* d = t.mutable_as<int32_t>() + start;
      for (int64_t i = 0; i < n; ++i) d[i] = src[i];
      return;
    }
    case v1::INT8: {
      int8_t* d = t.mutable_as<int8_t>() + start;
      for (int64_t i = 0; i < n; ++i) d[i] = static_cast<int8_t>(src[i]);  // wraps, as ONNX Cast does
      return;
    }
    case v1::BOOL: {
      uint8_t* d = t.mutable_as<uint8_t>() + start;
      for (int64_t i = 0; i < n; ++i) d[i] = src[i] != 0;
      return;
    }
    case v1::INT64: {
      int64_t* d = t.mutable_as<int64_t>() + start;
      for (int64_t i = 0; i < n; ++i) d[i] = src[i];
      return;
    }
    default: return;
  }
}

}  // namespace npu::graph
