// npu train's epoch order (client/cli/epoch_order.h) is the documented one,
// which a PyTorch script reproduces: the orders below are a Python
// implementation's (the loop in tests/train/make_digits_case.py), and
// splitmix64 from seed 0 starts with its published first output.
#include "client/cli/epoch_order.h"

#include <algorithm>
#include <numeric>

#include "gtest/gtest.h"

namespace npu::client::cli {
namespace {

TEST(EpochOrderTest, IsFisherYatesOverSplitMix64AsDocumented) {
  EpochOrder orders(10, 3);
  EXPECT_EQ(orders.Next(), (std::vector<int64_t>{2, 8, 7, 4, 5, 6, 0, 1, 9, 3}));
  EXPECT_EQ(orders.Next(), (std::vector<int64_t>{8, 6, 5, 4, 9, 1, 3, 7, 0, 2}));  // the generator runs on
  // Seed 0, two rows: row 1 swaps with row (0xe220a8397b1dcdaf % 2) = 1, i.e. stays.
  EXPECT_EQ(EpochOrder(2, 0).Next(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(EpochOrder(1, 5).Next(), (std::vector<int64_t>{0}));
  EXPECT_TRUE(EpochOrder(0, 5).Next().empty());
}

TEST(EpochOrderTest, EveryEpochIsAPermutation) {
  EpochOrder orders(1438, 7);
  for (int e = 0; e < 3; ++e) {
    std::vector<int64_t> order = orders.Next();
    std::sort(order.begin(), order.end());
    std::vector<int64_t> rows(1438);
    std::iota(rows.begin(), rows.end(), 0);
    EXPECT_EQ(order, rows);
  }
}

}  // namespace
}  // namespace npu::client::cli
