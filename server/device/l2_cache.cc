#include "server/device/l2_cache.h"

#include <algorithm>
#include <iterator>

namespace npu::device {

uint64_t L2Cache::ResidentBytes(const AddressRange& r) const {
  if (!r.known()) return 0;
  const uint64_t begin = r.offset, end = r.offset + r.bytes;
  uint64_t bytes = 0;
  auto it = regions_.upper_bound({r.space, begin});
  if (it != regions_.begin()) --it;
  for (; it != regions_.end() && it->first.first == r.space && it->first.second < end; ++it) {
    const uint64_t lo = std::max(begin, it->first.second), hi = std::min(end, it->second.end);
    if (hi > lo) bytes += hi - lo;
  }
  return bytes;
}

void L2Cache::SplitAt(uint64_t space, uint64_t at) {
  auto it = regions_.upper_bound({space, at});
  if (it == regions_.begin()) return;
  --it;
  if (it->first.first != space || it->first.second >= at || it->second.end <= at) return;
  // Both halves keep the stamp; eviction takes the lower one first.
  Region upper = it->second;
  it->second.end = at;
  regions_.emplace(Addr{space, at}, upper);
  by_stamp_.emplace(upper.stamp, Addr{space, at});
}

void L2Cache::Insert(uint64_t space, uint64_t begin, uint64_t end, uint64_t stamp, bool dirty) {
  regions_.emplace(Addr{space, begin}, Region{end, stamp, dirty});
  by_stamp_.emplace(stamp, Addr{space, begin});
  used_ += end - begin;
  if (dirty) dirty_ += end - begin;
}

void L2Cache::Erase(std::map<Addr, Region>::iterator it) {
  const uint64_t bytes = it->second.end - it->first.second;
  used_ -= bytes;
  if (it->second.dirty) dirty_ -= bytes;
  by_stamp_.erase({it->second.stamp, it->first});
  regions_.erase(it);
}

uint64_t L2Cache::EvictToFit() {
  uint64_t written_back = 0;
  while ((used_ > capacity_ || regions_.size() > kMaxRegions) && !by_stamp_.empty()) {
    const auto oldest = by_stamp_.begin();
    const auto it = regions_.find(oldest->second);
    const uint64_t bytes = it->second.end - it->first.second;
    const uint64_t excess = regions_.size() > kMaxRegions ? bytes : used_ - capacity_;
    if (it->second.dirty) written_back += std::min(bytes, excess);
    if (bytes <= excess) {
      Erase(it);
      continue;
    }
    // Trim the region's front (its oldest bytes): same stamp, later start.
    const Region kept = it->second;
    const uint64_t space = it->first.first, from = it->first.second + excess;
    Erase(it);
    Insert(space, from, kept.end, kept.stamp, kept.dirty);
  }
  return written_back;
}

void L2Cache::Discard(const AddressRange& r) {
  if (!r.known()) return;
  SplitAt(r.space, r.offset);
  SplitAt(r.space, r.offset + r.bytes);
  auto it = regions_.lower_bound({r.space, r.offset});
  while (it != regions_.end() && it->first.first == r.space && it->first.second < r.offset + r.bytes) Erase(it++);
}

L2Access L2Cache::Touch(const AddressRange& r, bool write) {
  L2Access a;
  if (!r.known()) return a;
  const uint64_t space = r.space, begin = r.offset, end = r.offset + r.bytes;
  SplitAt(space, begin);
  SplitAt(space, end);
  const uint64_t stamp = ++next_stamp_;
  // The regions inside [begin, end), in address order.
  auto it = regions_.lower_bound({space, begin});
  if (write) {
    while (it != regions_.end() && it->first.first == space && it->first.second < end) Erase(it++);
    Insert(space, begin, end, stamp, true);
  } else {
    uint64_t at = begin;
    while (at < end) {
      if (it != regions_.end() && it->first.first == space && it->first.second == at) {
        // Resident: a hit, touched now (re-stamped in address order).
        const Region region = it->second;
        a.hit_bytes += region.end - at;
        Erase(it++);
        Insert(space, at, region.end, stamp, region.dirty);
        at = region.end;
      } else {
        const uint64_t next = (it != regions_.end() && it->first.first == space) ? std::min(end, it->first.second) : end;
        a.miss_bytes += next - at;
        Insert(space, at, next, stamp, false);
        at = next;
      }
    }
  }
  a.written_back_bytes = EvictToFit();
  return a;
}

}  // namespace npu::device
