#include "server/train/host_tensors.h"

#include <cstring>
#include <memory>
#include <vector>

#include "kernels/fp16.h"

namespace npu::train {

graph::HostTensor ScalarF32(float v) {
  graph::HostTensor t = graph::HostTensor::Allocate({v1::FLOAT32, {}});
  t.mutable_as<float>()[0] = v;
  return t;
}

graph::HostTensor ScalarI64(int64_t v) {
  graph::HostTensor t = graph::HostTensor::Allocate({v1::INT64, {}});
  t.mutable_as<int64_t>()[0] = v;
  return t;
}

graph::HostTensor Zeros(const graph::TensorType& type) {
  graph::HostTensor t = graph::HostTensor::Allocate(type);
  std::memset(t.mutable_data(), 0, t.bytes());
  return t;
}

graph::HostTensor Rows(const graph::HostTensor& t, int64_t begin, int64_t count) {
  graph::TensorType type = t.type();
  const uint64_t row_bytes = type.shape[0] == 0 ? 0 : t.bytes() / static_cast<uint64_t>(type.shape[0]);
  type.shape[0] = count;
  auto keep = std::make_shared<graph::HostTensor>(t);
  return graph::HostTensor(type, std::shared_ptr<const void>(keep), t.data() + begin * row_bytes);
}

graph::HostTensor FromProto(const v1::Tensor& p, graph::DataType dtype, bool saturate) {
  const graph::TensorType type{dtype, graph::Shape(p.shape().begin(), p.shape().end())};
  graph::HostTensor t = graph::HostTensor::Allocate(type);
  const size_t n = static_cast<size_t>(type.elements());
  if (p.dtype() == dtype) {
    std::memcpy(t.mutable_data(), p.data().data(), t.bytes());
  } else if (p.dtype() == v1::FLOAT32 && dtype == v1::FLOAT16) {
    std::vector<float> f(n);
    std::memcpy(f.data(), p.data().data(), n * 4);
    kernels::FloatToHalfN(f.data(), t.mutable_as<kernels::half_bits>(), n, saturate);
  } else if (p.dtype() == v1::FLOAT16 && dtype == v1::FLOAT32) {
    kernels::HalfToFloatN(reinterpret_cast<const kernels::half_bits*>(p.data().data()), t.mutable_as<float>(), n);
  }
  return t;
}

void ToProto(const graph::HostTensor& t, v1::Tensor* out) {
  out->set_dtype(t.type().dtype);
  out->clear_shape();
  for (int64_t d : t.type().shape) out->add_shape(d);
  out->set_data(std::string(reinterpret_cast<const char*>(t.data()), t.bytes()));
}

std::vector<float> AsFloats(const graph::HostTensor& t) {
  const size_t n = static_cast<size_t>(t.type().elements());
  std::vector<float> f(n);
  if (t.type().dtype == v1::FLOAT16) {
    kernels::HalfToFloatN(t.as<kernels::half_bits>(), f.data(), n);
  } else {
    std::memcpy(f.data(), t.data(), n * 4);
  }
  return f;
}

}  // namespace npu::train
