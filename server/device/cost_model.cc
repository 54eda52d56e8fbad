#include "server/device/cost_model.h"

#include <algorithm>
#include <cmath>

namespace npu::device {
namespace {

uint64_t CyclesFor(uint64_t bytes, double bytes_per_cycle) {
  if (bytes == 0) return 0;
  return static_cast<uint64_t>(std::ceil(static_cast<double>(bytes) / bytes_per_cycle));
}

}  // namespace

TileCost CostTile(const TileWork& w, const DevicePreset& preset, uint64_t l2_read_bytes) {
  TileCost c;
  c.busy.cube = w.cube_fractals;  // one 16x16x16 fractal per cycle
  c.busy.vector = w.vector_repeats + w.vector_instructions * kVectorIssueCycles +
                  CyclesFor(w.l0c_to_ub_bytes, preset.l0c_to_ub_bytes_per_cycle);
  c.busy.scalar = kScalarCyclesPerTile + w.scalar_instructions;
  c.busy.mte1 = CyclesFor(w.mte1_a_bytes, preset.mte1_a_bytes_per_cycle) +
                CyclesFor(w.mte1_b_bytes, preset.mte1_b_bytes_per_cycle);
  const uint64_t hits = std::min(l2_read_bytes, w.mte2_bytes);
  c.busy.mte2 = CyclesFor(w.mte2_bytes - hits, preset.gm_bytes_per_cycle) + CyclesFor(hits, preset.l2_bytes_per_cycle);
  c.busy.mte3 = CyclesFor(w.mte3_bytes, preset.mte3_bytes_per_cycle);
  c.busy.fixpipe = CyclesFor(w.fixpipe_bytes, preset.fixpipe_bytes_per_cycle);

  // Double buffering overlaps the units; the tile lasts as long as its slowest
  // unit plus the pipeline fill (first load) and drain (last store), each one
  // step's share of the load/store work.
  const uint64_t steps = std::max<uint64_t>(1, w.pipeline_steps);
  const uint64_t fill = c.busy.mte2 / steps;
  const uint64_t drain = (c.busy.fixpipe + c.busy.mte3) / steps;
  c.duration = preset.block_start_cycles + c.busy.Max() + fill + drain;
  return c;
}

UnitCycles StretchTransfers(const TileCost& cost, uint64_t duration) {
  UnitCycles b = cost.busy;
  if (duration <= cost.duration || cost.duration == 0) return b;
  const double stretch = static_cast<double>(duration) / static_cast<double>(cost.duration);
  for (uint64_t* unit : {&b.mte2, &b.mte3, &b.fixpipe}) {
    *unit = std::min<uint64_t>(duration, static_cast<uint64_t>(static_cast<double>(*unit) * stretch));
  }
  return b;
}

}  // namespace npu::device
