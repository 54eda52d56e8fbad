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
//
// Cost: the model runs after every op of every run, so it is kept cheap. The
// recency order is a list threaded through the regions (no second tree), a
// hit is relinked in place, and a region that follows its address
// predecessor in both address and recency, with the same dirty flag, is
// merged into it: evicting the pair front first is evicting the one range
// front first, so merging changes no figure, only how many ranges are kept.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
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
  struct Region;
  using Entry = std::pair<const Addr, Region>;  // a node of the map below
  struct Region {
    uint64_t end = 0;  // offset one past the last byte (same space as the key)
    bool dirty = false;
    // Recency list: `older` is evicted first.
    Entry* older = nullptr;
    Entry* newer = nullptr;
  };
  using Map = std::map<Addr, Region>;
  L2Access Touch(const AddressRange& r, bool write);
  // Splits the region containing `at` (if any) so one starts exactly there;
  // returns the first region at or after `at`.
  Map::iterator SplitAt(uint64_t space, uint64_t at);
  // Cuts `it`, which spans `at`, in two there; returns the upper part.
  Map::iterator Split(Map::iterator it, uint64_t at);
  // Cuts `it` at `end` if it reaches past it; returns `it`.
  Map::iterator ClipTo(Map::iterator it, uint64_t end);
  // A resident range [begin, end) before `next`, the most recent.
  Map::iterator Insert(Map::iterator next, uint64_t space, uint64_t begin, uint64_t end, bool dirty);
  Map::iterator Erase(Map::iterator it);
  // Moves `e` to the most recent end of the recency list.
  void MakeNewest(Entry* e);
  // Merges `it` into its address predecessor when they touch, are adjacent in
  // recency (the predecessor older) and agree on dirtiness.
  void MergeWithPrevious(Map::iterator it);
  void Unlink(Entry* e);
  void LinkAfter(Entry* at, Entry* e);  // `at` null: as the oldest
  // Evicts until the resident bytes fit; returns the dirty bytes evicted.
  uint64_t EvictToFit();

  const uint64_t capacity_;
  uint64_t used_ = 0, dirty_ = 0;
  Map regions_;  // by address
  Entry* oldest_ = nullptr;
  Entry* newest_ = nullptr;
};

}  // namespace npu::device
