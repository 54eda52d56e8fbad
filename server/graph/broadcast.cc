#include "server/graph/broadcast.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "server/graph/shape_math.h"

namespace npu::graph {

absl::StatusOr<Shape> BroadcastShapes(const Shape& a, const Shape& b) {
  // Shapes from values (Expand's shape input) are unchecked: no negative dims.
  for (const Shape* s : {&a, &b}) {
    if (auto n = CheckedElements(*s, "broadcast"); !n.ok()) return n.status();
  }
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      return absl::InvalidArgumentError(absl::StrCat("shapes ", ShapeToString(a), " and ", ShapeToString(b),
                                                     " do not broadcast (dimension ", i, ": ", da, " vs ", db,
                                                     ")"));
    }
    out[i] = da == 1 ? db : da;
  }
  if (auto n = CheckedElements(out, "broadcast"); !n.ok()) return n.status();
  return out;
}

BroadcastMap::BroadcastMap(const Shape& in, const Shape& out) : out_(out), in_strides_(out.size(), 0) {
  identity_ = in == out;
  int64_t stride = 1;
  for (size_t k = 0; k < in.size(); ++k) {
    const size_t in_dim = in.size() - 1 - k;
    const size_t out_dim = out.size() - 1 - k;
    in_strides_[out_dim] = in[in_dim] == 1 ? 0 : stride;
    stride *= in[in_dim];
  }
  inner_stride_ = out.empty() ? 1 : in_strides_.back();
  if (!out.empty() && out.back() == 1) inner_stride_ = 1;
}

int64_t BroadcastMap::Offset(int64_t out_index) const {
  if (identity_) return out_index;
  int64_t offset = 0;
  for (size_t d = out_.size(); d-- > 0;) {
    const int64_t dim = out_[d];
    if (dim == 0) return 0;
    offset += (out_index % dim) * in_strides_[d];
    out_index /= dim;
  }
  return offset;
}

}  // namespace npu::graph
