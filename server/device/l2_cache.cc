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

void L2Cache::Unlink(Entry* e) {
  Region& r = e->second;
  (r.older != nullptr ? r.older->second.newer : oldest_) = r.newer;
  (r.newer != nullptr ? r.newer->second.older : newest_) = r.older;
  r.older = r.newer = nullptr;
}

void L2Cache::LinkAfter(Entry* at, Entry* e) {
  Region& r = e->second;
  r.older = at;
  r.newer = at != nullptr ? at->second.newer : oldest_;
  (r.older != nullptr ? r.older->second.newer : oldest_) = e;
  (r.newer != nullptr ? r.newer->second.older : newest_) = e;
}

void L2Cache::MakeNewest(Entry* e) {
  if (e == newest_) return;
  Unlink(e);
  LinkAfter(newest_, e);
}

L2Cache::Map::iterator L2Cache::Split(Map::iterator it, uint64_t at) {
  // The upper part is as recent as the lower and follows it: eviction takes
  // the lower one first.
  const Region upper{it->second.end, it->second.dirty};
  it->second.end = at;
  const auto up = regions_.emplace_hint(std::next(it), Addr{it->first.first, at}, upper);
  LinkAfter(&*it, &*up);
  return up;
}

L2Cache::Map::iterator L2Cache::ClipTo(Map::iterator it, uint64_t end) {
  if (it->second.end > end) Split(it, end);
  return it;
}

L2Cache::Map::iterator L2Cache::SplitAt(uint64_t space, uint64_t at) {
  const auto it = regions_.lower_bound({space, at});
  if (it == regions_.begin()) return it;
  const auto prev = std::prev(it);
  if (prev->first.first != space || prev->second.end <= at) return it;
  return Split(prev, at);
}

L2Cache::Map::iterator L2Cache::Insert(Map::iterator next, uint64_t space, uint64_t begin, uint64_t end, bool dirty) {
  const auto it = regions_.emplace_hint(next, Addr{space, begin}, Region{end, dirty});
  LinkAfter(newest_, &*it);
  used_ += end - begin;
  if (dirty) dirty_ += end - begin;
  return it;
}

L2Cache::Map::iterator L2Cache::Erase(Map::iterator it) {
  const uint64_t bytes = it->second.end - it->first.second;
  used_ -= bytes;
  if (it->second.dirty) dirty_ -= bytes;
  Unlink(&*it);
  return regions_.erase(it);
}

void L2Cache::MergeWithPrevious(Map::iterator it) {
  if (it == regions_.begin()) return;
  const auto prev = std::prev(it);
  if (it->second.older != &*prev || prev->first.first != it->first.first || prev->second.end != it->first.second ||
      prev->second.dirty != it->second.dirty) {
    return;
  }
  prev->second.end = it->second.end;
  Unlink(&*it);
  regions_.erase(it);
}

uint64_t L2Cache::EvictToFit() {
  uint64_t written_back = 0;
  while ((used_ > capacity_ || regions_.size() > kMaxRegions) && oldest_ != nullptr) {
    Entry* const e = oldest_;
    const uint64_t bytes = e->second.end - e->first.second;
    const uint64_t excess = regions_.size() > kMaxRegions ? bytes : used_ - capacity_;
    const bool dirty = e->second.dirty;
    if (dirty) written_back += std::min(bytes, excess);
    const auto it = regions_.find(e->first);
    if (bytes <= excess) {
      Erase(it);
      continue;
    }
    // Trim the region's front (its oldest bytes): it keeps its place in the
    // recency order (the node, and so every link to it, stays the same).
    auto node = regions_.extract(it);
    node.key().second += excess;
    regions_.insert(std::move(node));
    used_ -= excess;
    if (dirty) dirty_ -= excess;
  }
  return written_back;
}

void L2Cache::Discard(const AddressRange& r) {
  if (!r.known()) return;
  const uint64_t end = r.offset + r.bytes;
  auto it = SplitAt(r.space, r.offset);
  while (it != regions_.end() && it->first.first == r.space && it->first.second < end) it = Erase(ClipTo(it, end));
}

L2Access L2Cache::Touch(const AddressRange& r, bool write) {
  L2Access a;
  if (!r.known()) return a;
  const uint64_t space = r.space, begin = r.offset, end = r.offset + r.bytes;
  // The regions inside [begin, end), in address order; the last one is cut
  // at `end` when reached.
  auto it = SplitAt(space, begin);
  if (write) {
    while (it != regions_.end() && it->first.first == space && it->first.second < end) it = Erase(ClipTo(it, end));
    MergeWithPrevious(Insert(it, space, begin, end, true));
  } else {
    // Touched in address order: each piece becomes the most recent in turn.
    uint64_t at = begin;
    while (at < end) {
      if (it != regions_.end() && it->first.first == space && it->first.second == at) {
        ClipTo(it, end);
        a.hit_bytes += it->second.end - at;
        at = it->second.end;
        MakeNewest(&*it);
        MergeWithPrevious(it++);
      } else {
        const uint64_t next = (it != regions_.end() && it->first.first == space) ? std::min(end, it->first.second) : end;
        a.miss_bytes += next - at;
        MergeWithPrevious(Insert(it, space, at, next, false));
        at = next;
      }
    }
  }
  a.written_back_bytes = EvictToFit();
  return a;
}

}  // namespace npu::device
