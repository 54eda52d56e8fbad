// Channel-major FixPipe (kernels/fixpipe.h): FixPipeColumns, which moves a
// block of columns at a time, against the definition of the write-back: column
// j of the tile, rounded and counted as FixPipeRow does one value at a time
// (a run of one), at out + j * out_stride. Every shape of block edge (rows and
// columns not multiples of 8 or 16, more rows than one chunk), fp32 and fp16
// out, with a bias.
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/fixpipe.h"
#include "kernels/fp16.h"

namespace npu::kernels {
namespace {

TEST(FixPipeColumns, EachColumnIsWrittenAsTheRowWriteBackWritesItsValues) {
  std::mt19937 rng(23);
  std::uniform_real_distribution<float> value(-80000.0f, 80000.0f);  // some overflow fp16
  for (ElemType out_type : {ElemType::kFloat32, ElemType::kFloat16}) {
    for (int64_t rows : {1, 7, 8, 9, 63, 256, 300}) {
      for (int64_t cols : {1, 5, 8, 16, 17, 40}) {
        const int64_t stride = cols + 3, out_stride = rows + 2;
        std::vector<float> acc(rows * stride), bias(cols);
        for (float& v : acc) v = value(rng);
        for (float& v : bias) v = value(rng) / 8;
        FixPipeConfig cfg;
        cfg.bias = bias.data();
        cfg.out_type = out_type;
        const size_t size = out_type == ElemType::kFloat16 ? 2 : 4;
        std::vector<char> got(cols * out_stride * size, 0), want(got.size(), 0);
        const uint64_t overflow = FixPipeColumns(acc.data(), stride, rows, 0, cols, 0, out_stride, cfg, got.data());
        uint64_t want_overflow = 0;
        for (int64_t j = 0; j < cols; ++j) {
          for (int64_t i = 0; i < rows; ++i) {
            // One accumulator as a row of one: its own column's bias.
            FixPipeConfig one = cfg;
            one.bias = bias.data() + j;
            want_overflow += FixPipeRow(&acc[i * stride + j], 0, 1, 0, one, want.data() + (j * out_stride + i) * size);
          }
        }
        ASSERT_EQ(std::memcmp(got.data(), want.data(), got.size()), 0) << rows << " x " << cols << " size " << size;
        EXPECT_EQ(overflow, want_overflow) << rows << " x " << cols;
      }
    }
  }
}

}  // namespace
}  // namespace npu::kernels
