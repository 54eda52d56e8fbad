#include "server/device/core_pool.h"

#include <algorithm>
#include <iterator>

#include "server/device/cost_model.h"
#include "server/device/l2_traffic.h"
#include "server/device/op_fluid.h"

namespace npu::device {

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

ScheduledOp CorePool::Schedule(const OpWork& work, uint64_t ready) {
  ScheduledOp op;
  op.ready = op.dispatch = op.start = op.end = op.complete = ready;
  // Work off the AI cores (a collective's DMA, the AI CPU) writes its results
  // to HBM past the L2: what the L2 held of those ranges is stale.
  const bool off_cores = work.task_type == TaskType::kHccl || work.task_type == TaskType::kAiCpu || work.tiles.empty();
  if (off_cores) {
    for (const AddressRange& r : work.writes) l2_.Discard(r);
  }
  if (work.task_type == TaskType::kHccl) {  // on the links: its group fixed when (collective_group.h)
    op.dispatch = op.start = std::max(ready, work.comm.start);
    op.end = op.complete = std::max(op.start, work.comm.end);
    return op;
  }
  if (off_cores) return op;
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
  // stream in lock step (l2_traffic.h).
  std::vector<FluidTile> fluid(work.tiles.size());
  std::vector<TileCost> costs(work.tiles.size());
  std::vector<uint64_t> hbm_of_tile(work.tiles.size());
  const OpL2Traffic traffic(work, serial);
  for (size_t begin = 0; begin < work.tiles.size(); begin += active) {
    const size_t end = std::min(work.tiles.size(), begin + active);
    const std::vector<TileL2Traffic> wave = traffic.Wave(begin, end, l2_);
    for (size_t i = begin; i < end; ++i) {
      const TileL2Traffic& t = wave[i - begin];
      costs[i] = CostTile(work.tiles[i], preset_, t.hit_bytes);
      fluid[i] = FluidTile{std::max<uint64_t>(1, costs[i].duration), static_cast<double>(t.hbm_bytes),
                           static_cast<double>(t.hit_bytes + t.l2_write_bytes)};
      hbm_of_tile[i] = t.hbm_bytes;
      op.l2_hit_bytes += t.hit_bytes;
      op.l2_write_bytes += t.l2_write_bytes;
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
