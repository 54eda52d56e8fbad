// One reusable block of host memory per device for a run's intermediates: the
// plan gives every intermediate an offset in it (graph/arena_plan.h), so a run
// makes no allocation per node, and its pages, touched by earlier runs, cost no
// first-touch faults (~11 us per fresh 4 KiB page on these machines). Only the
// job holding the device touches it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace npu::device {

class RunArena {
 public:
  // At least `bytes` (64-byte aligned), contents undefined. Grows, never shrinks here.
  std::byte* Reserve(uint64_t bytes);
  // After a run: frees the block when it is larger than `keep_bytes`, so one
  // huge graph does not keep its memory for the life of the server.
  void Trim(uint64_t keep_bytes);
  uint64_t capacity() const { return capacity_; }

 private:
  struct Free {
    void operator()(std::byte* p) const;
  };
  std::unique_ptr<std::byte, Free> block_;
  uint64_t capacity_ = 0;
};

}  // namespace npu::device
