// The chip's L2 cache, shared by all AI cores, as an LRU set of GM slices.
// Only reads that several tiles of one op share (a GEMM's A row panels and B
// column panels) go through it: a hit is served on chip, a miss costs HBM
// bytes. Streamed operands (vector ops) read each byte once, so an L2 could
// not save them HBM traffic and the model lets them bypass it.
#pragma once

#include <cstdint>
#include <list>
#include <unordered_map>

namespace npu::device {

class L2Cache {
 public:
  explicit L2Cache(uint64_t capacity_bytes) : capacity_(capacity_bytes) {}

  // Reads `bytes` under `key`: true on a hit; on a miss the slice is loaded,
  // evicting least recently used slices until it fits.
  bool Access(uint64_t key, uint64_t bytes);

  uint64_t used_bytes() const { return used_; }

 private:
  struct Slice {
    uint64_t key, bytes;
  };
  const uint64_t capacity_;
  uint64_t used_ = 0;
  std::list<Slice> lru_;  // front = most recent
  std::unordered_map<uint64_t, std::list<Slice>::iterator> index_;
};

}  // namespace npu::device
