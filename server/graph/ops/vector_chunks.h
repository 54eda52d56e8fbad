// The loop every Vector op runs: the output split into tiles (one per Vector
// core), each processed in UB-sized chunks; the counted work of each chunk
// (and the results it overflowed) is added to its tile while the chunk is
// computed. Also the chunk operands of the Vector kernels: fp32 and fp16
// tensors are read and written in place (the kernels convert in registers),
// anything else is staged through an fp32 scratch buffer.
#pragma once

#include <algorithm>
#include <type_traits>
#include <vector>

#include "kernels/vector_kernels.h"
#include "server/graph/broadcast.h"
#include "server/graph/element_access.h"
#include "server/graph/op_registry.h"
#include "server/graph/ops/parallel_for.h"
#include "server/graph/vector_tiling.h"

namespace npu::graph::ops {

// The elements an op reads and writes: what decides whether its tiles run in
// parallel (ParallelFor's grain).
inline int64_t TouchedElements(const RunContext& ctx) {
  int64_t n = 0;
  for (const HostTensor* in : ctx.inputs) n += in == nullptr ? 0 : in->type().elements();
  for (const HostTensor& out : ctx.outputs) n += out.type().elements();
  return n;
}

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

// Calls chunk_fn(start, len) for every chunk of the first output's elements, in
// parallel over tiles; a chunk_fn that returns a count returns how many
// results it overflowed (integer ops return nothing). `operands`: UB buffers
// one element needs (inputs + output + scratch); `passes`: Vector instructions
// per chunk (device::VectorPasses of the kernel that runs).
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
    if (in != nullptr && in->type().elements() == n) {
      in_elem_bytes += static_cast<int64_t>(ElementSize(in->type().dtype));
    }
  }
  const int64_t out_elem_bytes = static_cast<int64_t>(ElementSize(out.type().dtype));
  ParallelFor(tiling.tiles, TouchedElements(ctx), [&](int64_t t) {
    const int64_t begin = tiling.TileBegin(t);
    const int64_t end = std::min(n, begin + tiling.per_tile);
    device::TileWork& work = ctx.work.tiles[static_cast<size_t>(t)];
    work.pipeline_steps = 0;
    for (int64_t s = begin; s < end; s += tiling.chunk) {
      const int64_t len = std::min(tiling.chunk, end - s);
      uint64_t overflowed = 0;
      if constexpr (std::is_void_v<decltype(chunk_fn(s, len))>) {
        chunk_fn(s, len);
      } else {
        overflowed = chunk_fn(s, len);
      }
      work += VectorChunkWork(len, len * in_elem_bytes, len * out_elem_bytes, lane, passes);
      work.overflow_elements += overflowed;
    }
  });
  // Small broadcast inputs (biases, scalars) are loaded into UB once per tile.
  for (const HostTensor* in : ctx.inputs) {
    if (in == nullptr || in->type().elements() == n) continue;
    for (auto& w : ctx.work.tiles) w.mte2_bytes += in->bytes();
  }
}

// A float tensor's elements from `offset` on, as a Vector operand (fp32 or fp16:
// the kernels read either in place).
inline kernels::VecSrc SrcAt(const HostTensor& t, int64_t offset) {
  if (t.type().dtype == v1::FLOAT16) return kernels::F16Src(t.as<kernels::half_bits>() + offset);
  return kernels::F32Src(t.as<float>() + offset);
}
inline kernels::VecDst DstAt(const HostTensor& t, int64_t offset) {
  if (t.type().dtype == v1::FLOAT16) return kernels::F16Dst(t.mutable_as<kernels::half_bits>() + offset);
  return kernels::F32Dst(t.mutable_as<float>() + offset);
}

// Elements [s, s + len) of a (broadcast) input as a Vector operand: the tensor
// itself when same-shape fp32/fp16, its one value when it has one element,
// else gathered into `scratch` as fp32.
inline kernels::VecSrc ChunkSrc(const HostTensor& t, const BroadcastMap& map, int64_t s, int64_t len,
                                std::vector<float>& scratch) {
  const DataType dt = t.type().dtype;
  if (map.identity() && dt == v1::FLOAT32) return kernels::F32Src(t.as<float>() + s);
  if (map.identity() && dt == v1::FLOAT16) return kernels::F16Src(t.as<kernels::half_bits>() + s);
  if (t.type().elements() == 1) {
    scratch.resize(1);
    LoadAsFloat(t, 0, 1, 1, scratch.data());
    return {scratch.data(), kernels::Storage::kF32, /*broadcast=*/true};
  }
  scratch.resize(static_cast<size_t>(len));
  GatherBroadcast(t, map, s, len, scratch.data());
  return kernels::F32Src(scratch.data());
}

// Runs body(work, begin, end) over `units` independent pieces of an op (rows,
// planes, blocks of outputs) split into min(units, Vector cores) tiles, in
// parallel unless the op is small; each tile counts its own work (at least
// one pipeline step). `work_elements`: the op's cost in elements, when it is
// more than those it reads and writes (a stencil's taps).
template <typename Body>
void ForEachUnitTile(RunContext& ctx, int64_t units, Body&& body, int64_t work_elements = -1) {
  const int64_t tiles = std::max<int64_t>(1, std::min<int64_t>(units, ctx.preset.vector_unit_cores()));
  ctx.work.tiles.assign(static_cast<size_t>(tiles), device::TileWork{});
  ParallelFor(tiles, work_elements >= 0 ? work_elements : TouchedElements(ctx), [&](int64_t t) {
    device::TileWork& work = ctx.work.tiles[static_cast<size_t>(t)];
    work.pipeline_steps = 0;
    body(work, units * t / tiles, units * (t + 1) / tiles);
    work.pipeline_steps = std::max<uint64_t>(1, work.pipeline_steps);
  });
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

// Where a chunk's result goes: straight into an fp32/fp16 output, else into
// `scratch`, which FinishChunk converts.
inline kernels::VecDst ChunkDst(const HostTensor& out, int64_t s, int64_t len, std::vector<float>& scratch) {
  if (out.type().dtype == v1::FLOAT32) return kernels::F32Dst(out.mutable_as<float>() + s);
  if (out.type().dtype == v1::FLOAT16) return kernels::F16Dst(out.mutable_as<kernels::half_bits>() + s);
  scratch.resize(static_cast<size_t>(len));
  return kernels::F32Dst(scratch.data());
}

// Stores a staged result (non-float outputs: BOOL of a comparison); returns the
// kernel's overflow count plus the store's.
inline uint64_t FinishChunk(const HostTensor& out, int64_t s, int64_t len, const kernels::VecDst& dst,
                            uint64_t overflowed) {
  if (IsFloat(out.type().dtype)) return overflowed;
  return StoreFromFloat(out, s, len, static_cast<const float*>(dst.data), false);
}

}  // namespace npu::graph::ops
