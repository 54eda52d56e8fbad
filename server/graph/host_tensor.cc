#include "server/graph/host_tensor.h"

#include <cstdlib>
#include <new>

#include "server/device/fresh_memory_fill.h"

namespace npu::graph {

HostTensor::HostTensor(TensorType type, std::shared_ptr<const void> owner, const std::byte* data)
    : type_(std::move(type)), owner_(std::move(owner)), data_(data) {}

HostTensor HostTensor::Allocate(TensorType type) {
  const size_t bytes = type.bytes();
  const size_t rounded = (bytes + 63) / 64 * 64;  // aligned_alloc wants a multiple of the alignment
  void* p = std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
  if (p == nullptr) throw std::bad_alloc();
  device::FillFreshMemory(p, rounded);
  std::shared_ptr<void> owner(p, std::free);
  return HostTensor(std::move(type), owner, static_cast<const std::byte*>(p));
}

}  // namespace npu::graph
