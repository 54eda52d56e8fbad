// The chip's L2 cache, shared by all AI cores and kept for the device's life
// (a fresh device starts empty), in front of HBM for every GM access.
//
// Granularity: byte ranges ("regions"). The cache holds disjoint resident
// ranges of device memory (address_range.h), each with the time of its last
// access and a dirty flag. No line rounding: every tensor the model addresses
// starts 64-byte aligned, and an L2 line (128 to 512 bytes on Ascend, not
// published) would move a figure by at most one line per range end.
//
//   Read   the resident part hits; the rest is fetched from HBM and becomes
//          resident (clean).
//   Write  write-allocate: the range becomes resident and dirty, nothing is
//          fetched (the op writes every byte of it).
//   Evict  least recently used first; within one access, lower addresses were
//          touched first, so a range larger than the cache keeps only its last
//          `capacity` bytes (a stream). Dirty bytes evicted are written back
//          to HBM and charged to the access that evicted them.
//
// Nothing is flushed at the end of a run: results stay dirty until evicted.
// Deterministic: eviction order depends on access order only. At most
// kMaxRegions ranges are kept (a bound on the model's memory whatever a
// client's graph looks like): past it the least recent range is evicted
// whole, as if by capacity. Real graphs stay far below it (a 4096^3 GEMM's
// panel slices are ~3,000 ranges).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <utility>

#include "server/device/address_range.h"

namespace npu::device {

struct L2Access {
  uint64_t hit_bytes = 0;         // read from the L2
  uint64_t miss_bytes = 0;        // read from HBM (then resident)
  uint64_t written_back_bytes = 0;  // dirty data evicted to HBM
};

class L2Cache {
 public:
  static constexpr size_t kMaxRegions = 65536;

  explicit L2Cache(uint64_t capacity_bytes) : capacity_(capacity_bytes) {}

  L2Access Read(const AddressRange& r) { return Touch(r, false); }
  L2Access Write(const AddressRange& r) { return Touch(r, true); }
  // Forgets `r`, dirty bytes too: something past the L2 (a DMA) overwrote it.
  void Discard(const AddressRange& r);

  uint64_t used_bytes() const { return used_; }
  uint64_t dirty_bytes() const { return dirty_; }
  uint64_t capacity_bytes() const { return capacity_; }
  // Resident bytes of `r`, without touching it.
  uint64_t ResidentBytes(const AddressRange& r) const;
  size_t regions() const { return regions_.size(); }

 private:
  using Addr = std::pair<uint64_t, uint64_t>;  // (space, offset)
  struct Region {
    uint64_t end = 0;  // offset one past the last byte (same space as the key)
    uint64_t stamp = 0;
    bool dirty = false;
  };
  L2Access Touch(const AddressRange& r, bool write);
  // Splits the region containing `at` (if any) so one starts exactly there.
  void SplitAt(uint64_t space, uint64_t at);
  void Insert(uint64_t space, uint64_t begin, uint64_t end, uint64_t stamp, bool dirty);
  void Erase(std::map<Addr, Region>::iterator it);
  // Evicts until the resident bytes fit; returns the dirty bytes evicted.
  uint64_t EvictToFit();

  const uint64_t capacity_;
  uint64_t used_ = 0, dirty_ = 0;
  uint64_t next_stamp_ = 0;
  std::map<Addr, Region> regions_;  // by address
  // By last access, then address (the halves of a split region share a
  // stamp): the front is evicted first.
  std::set<std::pair<uint64_t, Addr>> by_stamp_;
};

}  // namespace npu::device
