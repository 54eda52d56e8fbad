#include "server/device/run_arena.h"

#include <malloc.h>

#include <new>

#include "server/device/fresh_memory_fill.h"

namespace npu::device {

constexpr std::align_val_t kAlign{64};

void RunArena::Free::operator()(std::byte* p) const { ::operator delete(p, kAlign); }

std::byte* RunArena::Reserve(uint64_t bytes) {
  if (bytes <= capacity_) {
    FillFreshMemory(block_.get(), bytes);  // tests only: a reused block counts as fresh for each run
    return block_.get();
  }
  block_.reset();
  capacity_ = 0;
  const uint64_t rounded = (bytes + 63) & ~uint64_t{63};
  block_.reset(static_cast<std::byte*>(::operator new(rounded, kAlign)));  // bad_alloc: the run fails, cleanly
  capacity_ = rounded;
  FillFreshMemory(block_.get(), rounded);
  return block_.get();
}

void RunArena::Trim(uint64_t keep_bytes) {
  if (capacity_ <= keep_bytes) return;
  block_.reset();
  capacity_ = 0;
  malloc_trim(0);
}

}  // namespace npu::device
