#include "server/graph/element_access.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/fp16.h"
#include "kernels/vector_kernels.h"

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

// Writes convert(src[i]) into elements [start, start + n) of `t` stored as Dst.
template <typename Dst, typename Src, typename Convert>
void StoreConverted(const HostTensor& t, int64_t start, int64_t n, const Src* src, Convert convert) {
  Dst* d = t.mutable_as<Dst>() + start;
  for (int64_t i = 0; i < n; ++i) d[i] = static_cast<Dst>(convert(src[i]));
}

// Float to a signed integer as the NPU's conversion does: truncate toward
// zero, saturate out-of-range values, NaN to 0.
template <typename I>
I FloatToInt(float v) {
  constexpr float kLimit = -static_cast<float>(std::numeric_limits<I>::min());  // 2^(bits-1), exact
  if (std::isnan(v)) return 0;
  if (v >= kLimit) return std::numeric_limits<I>::max();
  if (v <= -kLimit) return std::numeric_limits<I>::min();
  return static_cast<I>(v);
}

// An integer tensor's elements [offset + i*stride] as I (narrowing wraps, as
// ONNX Cast does between integer types).
template <typename I>
void LoadInts(const HostTensor& t, int64_t offset, int64_t stride, int64_t n, I* dst) {
  switch (t.type().dtype) {
    case v1::INT32: return StridedCopy(t.as<int32_t>() + offset, stride, n, dst);
    case v1::INT8: return StridedCopy(t.as<int8_t>() + offset, stride, n, dst);
    case v1::BOOL: return StridedCopy(t.as<uint8_t>() + offset, stride, n, dst);
    case v1::INT64: return StridedCopy(t.as<int64_t>() + offset, stride, n, dst);
    default: return;
  }
}

// Float tensors' elements as I, converted through fp32 in blocks.
template <typename I>
void LoadFloatsAsInts(const HostTensor& t, int64_t offset, int64_t stride, int64_t n, I* dst) {
  float tmp[256];
  for (int64_t done = 0; done < n; done += 256) {
    const int64_t len = std::min<int64_t>(256, n - done);
    LoadAsFloat(t, offset + done * stride, stride, len, tmp);
    for (int64_t i = 0; i < len; ++i) dst[done + i] = FloatToInt<I>(tmp[i]);
  }
}

// Integers into a tensor of any dtype: floats round to nearest (even), narrower
// integers wrap, BOOL is "!= 0".
template <typename I>
void StoreInts(const HostTensor& t, int64_t start, int64_t n, const I* src) {
  const auto same = [](I v) { return v; };
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
    case v1::INT32: return StoreConverted<int32_t>(t, start, n, src, same);
    case v1::INT8: return StoreConverted<int8_t>(t, start, n, src, same);
    case v1::BOOL: return StoreConverted<uint8_t>(t, start, n, src, [](I v) { return v != 0; });
    case v1::INT64: return StoreConverted<int64_t>(t, start, n, src, same);
    default: return;
  }
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
    default: return LoadInts(t, offset, stride, n, dst);  // INT64 rounds to nearest (even)
  }
}

std::vector<float> AsFloats(const HostTensor& t) {
  std::vector<float> v(static_cast<size_t>(t.type().elements()));
  LoadAsFloat(t, 0, 1, t.type().elements(), v.data());
  return v;
}

void LoadAsInt32(const HostTensor& t, int64_t offset, int64_t stride, int64_t n, int32_t* dst) {
  if (IsFloat(t.type().dtype)) return LoadFloatsAsInts(t, offset, stride, n, dst);
  LoadInts(t, offset, stride, n, dst);
}

void LoadAsInt64(const HostTensor& t, int64_t offset, int64_t stride, int64_t n, int64_t* dst) {
  if (IsFloat(t.type().dtype)) return LoadFloatsAsInts(t, offset, stride, n, dst);
  LoadInts(t, offset, stride, n, dst);
}

uint64_t StoreFromFloat(const HostTensor& t, int64_t start, int64_t n, const float* src, bool saturate) {
  const auto to_float = [&](kernels::VecDst dst) {
    return kernels::VectorKernels().convert(kernels::F32Src(src), dst, static_cast<size_t>(n), saturate);
  };
  switch (t.type().dtype) {  // integer results never raise the float status
    case v1::FLOAT16: return to_float(kernels::F16Dst(t.mutable_as<kernels::half_bits>() + start));
    case v1::FLOAT32: return to_float(kernels::F32Dst(t.mutable_as<float>() + start));
    case v1::INT32: StoreConverted<int32_t>(t, start, n, src, FloatToInt<int32_t>); return 0;
    case v1::INT8: StoreConverted<int8_t>(t, start, n, src, FloatToInt<int8_t>); return 0;
    case v1::BOOL: StoreConverted<uint8_t>(t, start, n, src, [](float v) { return v != 0.0f; }); return 0;
    case v1::INT64: StoreConverted<int64_t>(t, start, n, src, FloatToInt<int64_t>); return 0;
    default: return 0;
  }
}

void StoreFromInt32(const HostTensor& t, int64_t start, int64_t n, const int32_t* src) {
  StoreInts(t, start, n, src);
}

void StoreFromInt64(const HostTensor& t, int64_t start, int64_t n, const int64_t* src) {
  StoreInts(t, start, n, src);
}

}  // namespace npu::graph
