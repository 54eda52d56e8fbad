// The order of the training rows in each epoch of `npu train`, defined
// exactly so that a PyTorch script can draw the same batches
// (tests/train/make_digits_case.py does): Fisher-Yates over 0..rows-1,
// swapping row i with row j = splitmix64() % (i + 1) for i = rows-1 down to 1,
// from one splitmix64 generator seeded with --seed that runs on across epochs.
// (std::shuffle's draws are the standard library's own, not portable.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace npu::client::cli {

class EpochOrder {
 public:
  EpochOrder(size_t rows, uint64_t seed) : rows_(rows), state_(seed) {}
  // The next epoch's order.
  std::vector<int64_t> Next();

 private:
  uint64_t SplitMix64();

  const size_t rows_;
  uint64_t state_;
};

}  // namespace npu::client::cli
