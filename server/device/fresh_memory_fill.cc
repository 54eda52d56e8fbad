#include "server/device/fresh_memory_fill.h"

#include <atomic>
#include <cstring>

namespace npu::device {
namespace {
std::atomic<int> fill_byte{-1};
}  // namespace

void SetFreshMemoryFillForTesting(int byte) { fill_byte.store(byte, std::memory_order_relaxed); }

void FillFreshMemory(void* p, size_t bytes) {
  const int b = fill_byte.load(std::memory_order_relaxed);
  if (b >= 0 && p != nullptr) std::memset(p, b, bytes);
}

}  // namespace npu::device
