// The loop of Vector ops that work row by row (a softmax row, a normalised
// row, a pooled plane): `rows` independent rows split into contiguous ranges,
// one tile per Vector core, in parallel over the host threads (when the op
// touches enough elements to be worth a parallel region).
#pragma once

#include <algorithm>
#include <cstdint>

#include "server/graph/op_registry.h"
#include "server/graph/ops/parallel_for.h"
#include "server/graph/ops/vector_chunks.h"

namespace npu::graph::ops {

// body(begin, end, work) for each tile's rows [begin, end); work starts empty
// with no pipeline steps, and gets at least one.
template <typename Body>
void ForEachRowTile(RunContext& ctx, int64_t rows, Body&& body) {
  ctx.work.tiles.clear();
  if (rows <= 0) return;
  const int64_t tiles = std::min<int64_t>(rows, ctx.preset.vector_unit_cores());
  ctx.work.tiles.assign(static_cast<size_t>(tiles), device::TileWork{});
  ParallelFor(tiles, TouchedElements(ctx), [&](int64_t t) {
    device::TileWork& work = ctx.work.tiles[static_cast<size_t>(t)];
    work.pipeline_steps = 0;
    body(rows * t / tiles, rows * (t + 1) / tiles, work);
    work.pipeline_steps = std::max<uint64_t>(1, work.pipeline_steps);
  });
}

}  // namespace npu::graph::ops
