#include "server/device/l2_cache.h"

namespace npu::device {

bool L2Cache::Access(uint64_t key, uint64_t bytes) {
  if (auto it = index_.find(key); it != index_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second);
    return true;
  }
  if (bytes > capacity_) return false;  // streams through without displacing everything
  while (used_ + bytes > capacity_ && !lru_.empty()) {
    used_ -= lru_.back().bytes;
    index_.erase(lru_.back().key);
    lru_.pop_back();
  }
  lru_.push_front(Slice{key, bytes});
  index_[key] = lru_.begin();
  used_ += bytes;
  return false;
}

}  // namespace npu::device
