#include "server/device/core_pool.h"

#include <algorithm>

#include "server/device/cost_model.h"

namespace npu::device {

CorePool::CorePool(const DevicePreset& preset) : preset_(preset) {
  if (preset.separated()) {
    for (int i = 0; i < preset.cube_cores; ++i) {
      cube_cores_.push_back(static_cast<int>(cores_.size()));
      cores_.push_back(CoreInfo{"aic"});
    }
    for (int i = 0; i < preset.vector_cores; ++i) {
      vector_cores_.push_back(static_cast<int>(cores_.size()));
      cores_.push_back(CoreInfo{"aiv"});
    }
  } else {
    for (int i = 0; i < preset.cube_cores; ++i) {
      cube_cores_.push_back(i);
      cores_.push_back(CoreInfo{"ai_core"});
    }
    vector_cores_ = cube_cores_;
  }
}

const std::vector<int>& CorePool::CoresFor(TaskType t) const {
  return t == TaskType::kAiCore ? cube_cores_ : vector_cores_;
}

uint64_t CorePool::horizon() const {
  uint64_t h = 0;
  for (const auto& c : cores_) h = std::max(h, c.free_at);
  return h;
}

ScheduledOp CorePool::Schedule(const OpWork& work, uint64_t ready) {
  ScheduledOp op;
  op.start = op.end = ready;
  if (work.task_type == TaskType::kAiCpu || work.tiles.empty()) return op;
  const auto& eligible = CoresFor(work.task_type);
  const int active = static_cast<int>(std::min(work.tiles.size(), eligible.size()));
  op.block_dim = active;
  op.start = UINT64_MAX;
  op.end = 0;
  for (const TileWork& w : work.tiles) {
    // Earliest-free eligible core; ties go to the lowest index (deterministic).
    int best = eligible.front();
    for (int c : eligible) {
      if (cores_[c].free_at < cores_[best].free_at) best = c;
    }
    const TileCost cost = CostTile(w, preset_, active);
    TilePlacement t;
    t.core = best;
    t.start = std::max(ready, cores_[best].free_at);
    t.end = t.start + cost.duration;
    t.busy = cost.busy;
    cores_[best].free_at = t.end;
    cores_[best].busy += cost.busy;
    op.busy += cost.busy;
    op.start = std::min(op.start, t.start);
    op.end = std::max(op.end, t.end);
    op.tiles.push_back(t);
  }
  return op;
}

}  // namespace npu::device
