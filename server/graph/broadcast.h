// NumPy broadcasting: shape inference and the index walk that maps output
// elements to input elements.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/graph/tensor_type.h"

namespace npu::graph {

// The broadcast of `a` and `b`, or an error naming both shapes.
absl::StatusOr<Shape> BroadcastShapes(const Shape& a, const Shape& b);

// Maps linear indices of an output of shape `out` to offsets into an input of
// shape `in` (right-aligned, size-1 dims broadcast).
class BroadcastMap {
 public:
  BroadcastMap(const Shape& in, const Shape& out);
  bool identity() const { return identity_; }
  int64_t Offset(int64_t out_index) const;

  // Calls fn(out_start, in_offset, len, in_stride) for consecutive runs of the
  // innermost dimension covering [start, start + count): in_stride is 1 or 0.
  template <typename Fn>
  void ForEachRun(int64_t start, int64_t count, Fn&& fn) const {
    if (identity_) {
      fn(start, start, count, int64_t{1});
      return;
    }
    const int64_t inner = out_.empty() ? 1 : out_.back();
    int64_t i = start;
    const int64_t end = start + count;
    while (i < end) {
      const int64_t pos = inner == 0 ? 0 : i % inner;
      const int64_t len = std::min(inner - pos, end - i);
      fn(i, Offset(i), len, inner_stride_);
      i += len;
    }
  }

 private:
  Shape out_;
  std::vector<int64_t> in_strides_;  // per output dim; 0 where broadcast
  int64_t inner_stride_ = 1;
  bool identity_ = false;
};

}  // namespace npu::graph
