// A tensor's bytes in host memory, shared without copying: the owner may be a
// buffer the executor allocated or the request message the bytes arrived in.
#pragma once

#include <cstddef>
#include <memory>

#include "server/graph/tensor_type.h"

namespace npu::graph {

class HostTensor {
 public:
  HostTensor() = default;
  // Views `data` (type.bytes() long) kept alive by `owner`.
  HostTensor(TensorType type, std::shared_ptr<const void> owner, const std::byte* data);
  // A fresh 64-byte-aligned buffer of type.bytes() bytes, uninitialised.
  static HostTensor Allocate(TensorType type);

  const TensorType& type() const { return type_; }
  uint64_t bytes() const { return type_.bytes(); }
  const std::byte* data() const { return data_; }
  // False for a view whose owner is not tracked (bytes of a request being served).
  bool owns_data() const { return owner_ != nullptr; }
  template <typename T>
  const T* as() const { return reinterpret_cast<const T*>(data_); }
  // Only for tensors made by Allocate, while they are being filled.
  std::byte* mutable_data() const { return const_cast<std::byte*>(data_); }
  template <typename T>
  T* mutable_as() const { return reinterpret_cast<T*>(mutable_data()); }

 private:
  TensorType type_;
  std::shared_ptr<const void> owner_;
  const std::byte* data_ = nullptr;
};

}  // namespace npu::graph
