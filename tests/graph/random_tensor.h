// Random tensors for graph tests: values uniform in [lo, hi) (fp16 ones
// rounded to nearest), as wire tensors and as the HostTensors a plan runs on.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kernels/fp16.h"
#include "npu/v1/tensor.pb.h"
#include "server/graph/host_tensor.h"

namespace npu::graph::testing {

inline v1::Tensor RandomTensor(v1::DataType dtype, std::vector<int64_t> shape, std::mt19937& rng, float lo = -1,
                               float hi = 1) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::uniform_real_distribution<float> dist(lo, hi);
  v1::Tensor t;
  t.set_dtype(dtype);
  for (int64_t d : shape) t.add_shape(d);
  std::string bytes;
  for (int64_t i = 0; i < n; ++i) {
    const float v = dist(rng);
    if (dtype == v1::FLOAT16) {
      const kernels::half_bits h = kernels::FloatToHalf(v);
      bytes.append(reinterpret_cast<const char*>(&h), 2);
    } else {
      bytes.append(reinterpret_cast<const char*>(&v), 4);
    }
  }
  t.set_data(bytes);
  return t;
}

// A view of a copy of `t`, kept alive by the HostTensor.
inline HostTensor ToHost(const v1::Tensor& t) {
  auto owner = std::make_shared<v1::Tensor>(t);
  TensorType type{t.dtype(), Shape(t.shape().begin(), t.shape().end())};
  return HostTensor(type, owner, reinterpret_cast<const std::byte*>(owner->data().data()));
}

}  // namespace npu::graph::testing
