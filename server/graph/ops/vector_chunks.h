// The loop every Vector op runs: the output split into tiles (one per Vector
// core), each processed in UB-sized chunks; the counted work of each chunk is
// added to its tile while the chunk is computed. Also the chunk loads/stores
// that skip the staging copy when a tensor already is contiguous fp32.
#pragma once

#include <algorithm>
#include <vector>

#include "server/graph/broadcast.h"
#include "server/graph/element_access.h"
#include "server/graph/op_registry.h"
#include "server/graph/ops/parallel_for.h"
#include "server/graph/vector_tiling.h"

namespace npu::graph::ops {

// Calls chunk_fn(start, len) for every chunk of the first output's elements, in
// parallel over tiles. `operands`: UB buffers one element needs (inputs +
// output + scratch); `passes`: Vector instructions per chunk
// (device::VectorPasses of the kernel that runs).
// Bytes one element takes in a Vector lane: the widest of the op's tensors
// (a 256 B repeat is 128 fp16 or 64 fp32/int32 lanes; BOOL masks ride along).
inline int64_t LaneBytes(const RunContext& ctx) {
  int64_t lane = 1;
  auto widen = [&lane](const HostTensor& t) {
    if (t.type().dtype != v1::BOOL) lane = std::max<int64_t>(lane, static_cast<int64_t>(ElementSize(t.type().dtype)));
  };
  for (const HostTensor* in : ctx.inputs) {
    if (in != nullptr) widen(*in);
  }
  for (const HostTensor& out : ctx.outputs) widen(out);
  return lane;
}

template <typename ChunkFn>
void ForEachChunk(RunContext& ctx, int64_t operands, int64_t passes, ChunkFn&& chunk_fn) {
  const HostTensor& out = ctx.outputs[0];
  const int64_t n = out.type().elements();
  const int64_t lane = LaneBytes(ctx);
  const VectorTiling tiling = PlanVectorTiles(n, lane * operands, ctx.preset);
  ctx.work.tiles.assign(static_cast<size_t>(tiling.tiles), device::TileWork{});
  int64_t in_elem_bytes = 0;
  for (const HostTensor* in : ctx.inputs) {
    // A broadcast input is read once per output element from UB's view; count
    // the GM bytes it really has when it is smaller than the output.
    if (in != nullptr && in->type().elements() == n) in_elem_bytes += static_cast<int64_t>(ElementSize(in->type().dtype));
  }
  const int64_t out_elem_bytes = static_cast<int64_t>(ElementSize(out.type().dtype));
  ParallelFor(tiling.tiles, [&](int64_t t) {
    const int64_t begin = tiling.TileBegin(t);
    const int64_t end = std::min(n, begin + tiling.per_tile);
    device::TileWork& work = ctx.work.tiles[static_cast<size_t>(t)];
    work.pipeline_steps = 0;
    for (int64_t s = begin; s < end; s += tiling.chunk) {
      const int64_t len = std::min(tiling.chunk, end - s);
      chunk_fn(s, len);
      work += VectorChunkWork(len, len * in_elem_bytes, len * out_elem_bytes, lane, passes);
    }
  });
  // Small broadcast inputs (biases, scalars) are loaded into UB once per tile.
  for (const HostTensor* in : ctx.inputs) {
    if (in == nullptr || in->type().elements() == n) continue;
    for (auto& w : ctx.work.tiles) w.mte2_bytes += in->bytes();
  }
}

// Elements [s, s + len) of a (broadcast) input as fp32: a pointer into the
// tensor itself when it is same-shape fp32, else gathered into `scratch`.
inline const float* ChunkAsFloat(const HostTensor& t, const BroadcastMap& map, int64_t s, int64_t len,
                                 std::vector<float>& scratch) {
  if (map.identity() && t.type().dtype == v1::FLOAT32) return t.as<float>() + s;
  scratch.resize(static_cast<size_t>(len));
  GatherBroadcast(t, map, s, len, scratch.data());
  return scratch.data();
}

// Where a chunk's fp32 result goes: straight into an fp32 output, else into
// `scratch`, from which FinishChunk rounds it once.
inline float* OutChunk(const HostTensor& out, int64_t s, int64_t len, std::vector<float>& scratch) {
  if (out.type().dtype == v1::FLOAT32) return out.mutable_as<float>() + s;
  scratch.resize(static_cast<size_t>(len));
  return scratch.data();
}

inline void FinishChunk(const HostTensor& out, int64_t s, int64_t len, const float* result, bool saturate) {
  if (out.type().dtype == v1::FLOAT32) return;
  StoreFromFloat(out, s, len, result, saturate);
}

}  // namespace npu::graph::ops
