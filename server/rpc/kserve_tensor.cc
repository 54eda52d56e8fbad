#include "server/rpc/kserve_tensor.h"

#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "server/rpc/kserve_datatype.h"

namespace npu::rpc {
namespace {

// What malloc, and so protobuf's bytes, guarantee on x86-64.
constexpr uintptr_t kViewAlignment = 16;

}  // namespace

absl::StatusOr<graph::TensorType> DeclaredType(absl::string_view datatype,
                                               const google::protobuf::RepeatedField<int64_t>& shape,
                                               const std::string& what) {
  auto dtype = DataTypeFromKserve(datatype, what);
  if (!dtype.ok()) return dtype.status();
  return graph::ValidateType(*dtype, shape, what);
}

absl::StatusOr<graph::HostTensor> ViewRawTensor(const graph::TensorType& type, absl::string_view bytes,
                                                const std::string& what, absl::string_view source) {
  if (bytes.size() != type.bytes()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": ", KserveDataTypeName(type.dtype),
                                                   graph::ShapeToString(type.shape), " is ", type.bytes(), " bytes; ",
                                                   source, " has ", bytes.size()));
  }
  if (auto s = graph::CheckBoolBytes(type, bytes.data(), what); !s.ok()) return s;
  if (reinterpret_cast<uintptr_t>(bytes.data()) % kViewAlignment == 0) {
    return graph::HostTensor(type, nullptr, reinterpret_cast<const std::byte*>(bytes.data()));
  }
  graph::HostTensor copy = graph::HostTensor::Allocate(type);
  std::memcpy(copy.mutable_data(), bytes.data(), bytes.size());
  return copy;
}

}  // namespace npu::rpc
