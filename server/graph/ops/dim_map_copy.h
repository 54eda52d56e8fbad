// The MTE data movement under Pad, Tile and Resize (nearest): every output
// element is the input element whose index along each dim d is map[d][o_d], or
// the fill value where any map entry is -1 (constant padding). The maps are
// built at plan time; each output row (last dim) is a few planned runs, each a
// contiguous burst (MTE2 in, MTE3 out), a reversed or repeated element, or a
// fill (a Vector dup in UB, then MTE3). Counted run by run as it copies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "server/graph/op_registry.h"

namespace npu::graph::ops {

struct DimMap {
  // One piece of an output row: `len` elements from output column `out`,
  // reading input columns src, src + step, ... (step 0 repeats one element),
  // or the fill value when src < 0.
  struct Run {
    int64_t out = 0, src = 0, len = 0, step = 1;
  };
  Shape in, out;
  std::vector<std::vector<int64_t>> outer;  // per dim but the last: output index -> input index or -1
  std::vector<Run> row;                     // the last dim as runs

  // Sets the maps, one per output dim (output index -> input index or -1).
  void SetMaps(std::vector<std::vector<int64_t>> maps);
};

// The map of `in` to `out` where source(d, o) is the input index that output
// index o of dim d reads (or -1). An empty output has no maps (it may still
// have a huge dim); the caller checked `out` against its size limits.
template <typename SourceFn>
DimMap MakeDimMap(const Shape& in, const Shape& out, SourceFn&& source) {
  DimMap m;
  m.in = in;
  m.out = out;
  int64_t elements = 1;
  for (int64_t d : out) elements *= d;
  if (elements == 0) return m;
  std::vector<std::vector<int64_t>> maps(out.size());
  for (size_t d = 0; d < out.size(); ++d) {
    maps[d].resize(static_cast<size_t>(out[d]));
    for (int64_t o = 0; o < out[d]; ++o) maps[d][o] = source(static_cast<int64_t>(d), o);
  }
  m.SetMaps(std::move(maps));
  return m;
}

// Copies per `map` from `src` to `dst` (same dtype), in parallel over output
// rows, and appends the tiles' counted work to ctx.work. `fill`: one element of
// the dtype (may be null when no map entry is -1).
void CopyByDimMap(RunContext& ctx, const HostTensor& src, const HostTensor& dst, const DimMap& map,
                  const std::byte* fill);

}  // namespace npu::graph::ops
