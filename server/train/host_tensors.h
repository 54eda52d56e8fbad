// Small host-tensor helpers the trainer binds steps with: scalars, zeros,
// a view of a batch's rows, tensors from initializers and back.
#pragma once

#include <cstdint>

#include "npu/v1/tensor.pb.h"
#include "server/graph/host_tensor.h"

namespace npu::train {

graph::HostTensor ScalarF32(float v);
graph::HostTensor ScalarI64(int64_t v);
graph::HostTensor Zeros(const graph::TensorType& type);
// Rows [begin, begin + count) of `t` (its first dimension), sharing its bytes.
graph::HostTensor Rows(const graph::HostTensor& t, int64_t begin, int64_t count);
// A copy of a wire tensor's bytes, converted to `dtype` (FLOAT32 <-> FLOAT16 or
// the same); FLOAT32 -> FLOAT16 rounds in the trainer's float mode (`saturate`:
// Ascend 910 saturation, +-65504 and NaN 0; else IEEE inf/NaN).
graph::HostTensor FromProto(const v1::Tensor& t, graph::DataType dtype, bool saturate);
void ToProto(const graph::HostTensor& t, v1::Tensor* out);
// `t` (FLOAT16 or FLOAT32) as fp32 values.
std::vector<float> AsFloats(const graph::HostTensor& t);

}  // namespace npu::train
