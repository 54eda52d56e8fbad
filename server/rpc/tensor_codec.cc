#include "server/rpc/tensor_codec.h"

#include "absl/strings/str_cat.h"

namespace npu::rpc {

absl::StatusOr<graph::HostTensor> ViewTensor(const v1::Tensor& msg, const std::string& what) {
  auto type = graph::ValidateType(msg.dtype(), msg.shape(), what);
  if (!type.ok()) return type.status();
  if (type->bytes() != msg.data().size()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": ", graph::ToString(*type), " needs ", type->bytes(),
                                                   " bytes of data, got ", msg.data().size()));
  }
  if (auto s = graph::CheckBoolBytes(*type, msg.data().data(), what); !s.ok()) return s;
  return graph::HostTensor(*type, nullptr, reinterpret_cast<const std::byte*>(msg.data().data()));
}

void CopyToProto(const graph::HostTensor& t, v1::Tensor* msg) {
  msg->set_dtype(t.type().dtype);
  msg->clear_shape();
  for (int64_t d : t.type().shape) msg->add_shape(d);
  msg->set_data(reinterpret_cast<const char*>(t.data()), t.bytes());
}

}  // namespace npu::rpc
