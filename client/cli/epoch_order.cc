#include "client/cli/epoch_order.h"

#include <numeric>
#include <utility>

namespace npu::client::cli {

// Vigna's splitmix64 (the constants of its published definition).
uint64_t EpochOrder::SplitMix64() {
  state_ += 0x9E3779B97F4A7C15ull;
  uint64_t z = state_;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::vector<int64_t> EpochOrder::Next() {
  std::vector<int64_t> order(rows_);
  std::iota(order.begin(), order.end(), 0);
  for (size_t i = rows_; i-- > 1;) std::swap(order[i], order[SplitMix64() % (i + 1)]);
  return order;
}

}  // namespace npu::client::cli
