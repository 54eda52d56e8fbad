#include "server/device/core_pool.h"

#include <algorithm>
#include <iterator>

#include "server/device/cost_model.h"
#include "server/device/op_fluid.h"

namespace npu::device {
namespace {

// One L2 key per (op, shared read, slice); a multiplicative mix keeps them apart.
uint64_t SliceKey(uint64_t op_serial, uint64_t key, uint64_t slice) {
  uint64_t h = op_serial * 0x9E3779B97F4A7C15ull;
  h ^= key + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2);
  h ^= slice + 0x94D049BB133111EBull + (h << 6) + (h >> 2);
  return h;
}

}  // namespace

CorePool::CorePool(const DevicePreset& preset)
    : preset_(preset),
      l2_(preset.l2_bytes),
      memory_(preset.hbm_bytes_per_s / preset.clock_hz, preset.l2_bytes_per_s / preset.clock_hz) {
  if (preset.separated()) {
    for (int i = 0; i < preset.cube_cores; ++i) {
      cube_cores_.push_back(static_cast<int>(cores_.size()));
      cores_.push_back(CoreInfo{"aic", 0, {}});
    }
    for (int i = 0; i < preset.vector_cores; ++i) {
      vector_cores_.push_back(static_cast<int>(cores_.size()));
      cores_.push_back(CoreInfo{"aiv", 0, {}});
    }
  } else {
    for (int i = 0; i < preset.cube_cores; ++i) {
      cube_cores_.push_back(i);
      cores_.push_back(CoreInfo{"ai_core", 0, {}});
    }
    vector_cores_ = cube_cores_;
  }
}

const std::vector<int>& CorePool::CoresFor(TaskType t) const {
  return t == TaskType::kAiCore ? cube_cores_ : vector_cores_;
}

uint64_t CorePool::IssueAt(uint64_t ready) {
  const uint64_t gap = preset_.CyclesOfNs(preset_.task_gap_ns);
  uint64_t t = std::max(ready, stream_next_issue_);
  if (gap > 0) {
    // The slot starting before t may still cover it; then walk the later ones.
    auto it = slots_.upper_bound(t);
    if (it != slots_.begin() && std::prev(it)->second > t) t = std::prev(it)->second;
    for (; it != slots_.end() && it->first < t + gap; ++it) t = std::max(t, it->second);
    slots_.emplace(t, t + gap);
  }
  stream_next_issue_ = t + gap;
  // No task of this run or of one still to come issues before the floor.
  issue_floor_ = clock_.Issued(t);
  while (!slots_.empty() && slots_.begin()->second <= issue_floor_) slots_.erase(slots_.begin());
  return t;
}

uint64_t CorePool::horizon() const {
  uint64_t h = 0;
  for (const auto& c : cores_) h = std::max(h, c.free_at);
  return h;
}

std::vector<uint64_t> CorePool::L2HitsOfWave(const std::vector<TileWork>& tiles, size_t begin, size_t end,
                                             uint64_t op_serial, std::vector<uint64_t>& hbm) {
  std::vector<uint64_t> hits(end - begin, 0);
  hbm.assign(end - begin, 0);
  uint64_t max_steps = 0;
  for (size_t i = begin; i < end; ++i) {
    const TileWork& w = tiles[i];
    uint64_t shared = 0;
    for (const SharedRead& r : w.shared_reads) shared += r.bytes;
    // Streamed reads and all writes go to HBM.
    hbm[i - begin] = (w.mte2_bytes - std::min(w.mte2_bytes, shared)) + w.mte3_bytes + w.fixpipe_bytes;
    if (!w.shared_reads.empty()) max_steps = std::max(max_steps, std::max<uint64_t>(1, w.pipeline_steps));
  }
  for (uint64_t s = 0; s < max_steps; ++s) {
    for (size_t i = begin; i < end; ++i) {
      const TileWork& w = tiles[i];
      const uint64_t steps = std::max<uint64_t>(1, w.pipeline_steps);
      if (s >= steps) continue;
      for (const SharedRead& r : w.shared_reads) {
        const uint64_t slice = r.bytes / steps + (s + 1 == steps ? r.bytes % steps : 0);
        if (l2_.Access(SliceKey(op_serial, r.key, s), slice)) {
          hits[i - begin] += slice;
        } else {
          hbm[i - begin] += slice;
        }
      }
    }
  }
  return hits;
}

ScheduledOp CorePool::Schedule(const OpWork& work, uint64_t ready) {
  ScheduledOp op;
  op.ready = op.dispatch = op.start = op.end = op.complete = ready;
  if (work.task_type == TaskType::kHccl) {  // on the links: its group fixed when (collective_group.h)
    op.dispatch = op.start = std::max(ready, work.comm.start);
    op.end = op.complete = std::max(op.start, work.comm.end);
    return op;
  }
  if (work.task_type == TaskType::kAiCpu || work.tiles.empty()) return op;
  const auto& eligible = CoresFor(work.task_type);
  const size_t active = std::min(work.tiles.size(), eligible.size());
  op.block_dim = static_cast<int>(active);
  const uint64_t serial = ++op_serial_;
  op.dispatch = IssueAt(ready);
  const uint64_t blocks_from = op.dispatch + preset_.CyclesOfNs(preset_.task_launch_ns);
  // No tile of this or any later op can start before the earliest-free core.
  std::vector<uint64_t> free_at(cores_.size());
  uint64_t earliest_free = UINT64_MAX;
  for (size_t c = 0; c < cores_.size(); ++c) {
    free_at[c] = cores_[c].free_at;
    earliest_free = std::min(earliest_free, free_at[c]);
  }
  // A tile starts no earlier than its core is free (cores only ever free
  // later) nor than its task is issued, so none of any run starts before the
  // earliest-free core or the issue floor: what lies before goes.
  memory_.ForgetBefore(static_cast<double>(std::max(earliest_free, issue_floor_)));

  // The L2 sees the tiles of one wave (block_dim tiles that start together)
  // read their shared panels in lock step.
  std::vector<FluidTile> fluid(work.tiles.size());
  std::vector<TileCost> costs(work.tiles.size());
  std::vector<uint64_t> hbm_of_tile(work.tiles.size());
  for (size_t begin = 0; begin < work.tiles.size(); begin += active) {
    const size_t end = std::min(work.tiles.size(), begin + active);
    std::vector<uint64_t> hbm;
    const std::vector<uint64_t> hits = L2HitsOfWave(work.tiles, begin, end, serial, hbm);
    for (size_t i = begin; i < end; ++i) {
      costs[i] = CostTile(work.tiles[i], preset_, hits[i - begin]);
      fluid[i] = FluidTile{std::max<uint64_t>(1, costs[i].duration), static_cast<double>(hbm[i - begin]),
                           static_cast<double>(hits[i - begin])};
      hbm_of_tile[i] = hbm[i - begin];
      op.l2_hit_bytes += hits[i - begin];
    }
  }
  const CoreMemoryRates rates{preset_.gm_bytes_per_cycle, preset_.l2_bytes_per_cycle};
  const std::vector<FluidPlacement> placed = PlaceFluid(fluid, eligible, free_at, blocks_from, rates, memory_);

  op.start = UINT64_MAX;
  op.end = 0;
  for (size_t i = 0; i < work.tiles.size(); ++i) {
    TilePlacement t;
    t.core = placed[i].core;
    t.start = placed[i].start;
    t.end = placed[i].end;
    t.busy = StretchTransfers(costs[i], t.end - t.start);
    cores_[t.core].free_at = t.end;
    cores_[t.core].busy += t.busy;
    op.busy += t.busy;
    op.hbm_bytes += hbm_of_tile[i];
    op.start = std::min(op.start, t.start);
    op.end = std::max(op.end, t.end);
    op.tiles.push_back(t);
  }
  op.complete = op.end + preset_.CyclesOfNs(preset_.task_finish_ns);
  return op;
}

}  // namespace npu::device
