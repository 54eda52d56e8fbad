// The MTE data movement under Transpose, Slice, Expand, Concat and Split: a
// region of an input, addressed with arbitrary per-dimension strides, copied
// into a region of an output. No Vector work: MTE2 reads, MTE3 writes, the
// Scalar unit sets up one burst per row. Counted row by row as it copies.
#pragma once

#include <cstdint>
#include <vector>

#include "server/graph/op_registry.h"

namespace npu::graph::ops {

struct StridedRegion {
  Shape shape;                      // the region copied (same for source and destination)
  int64_t src_base = 0;             // element offsets of the region's first element
  int64_t dst_base = 0;
  std::vector<int64_t> src_strides;  // elements, per region dimension (0 = broadcast)
  std::vector<int64_t> dst_strides;
};

// Copies `region` from `src` to `dst` (same dtype), in parallel over rows, and
// appends the tiles' counted work to ctx.work.
void CopyRegion(RunContext& ctx, const HostTensor& src, const HostTensor& dst, const StridedRegion& region);

}  // namespace npu::graph::ops
