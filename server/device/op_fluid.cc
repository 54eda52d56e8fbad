#include "server/device/op_fluid.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "server/device/bandwidth_share.h"

namespace npu::device {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Running {
  size_t tile;
  int core;
  double remaining = 1.0;  // fraction of the tile still to do
  double gm_bytes = 0;     // HBM + L2 bytes
  double hbm_fraction = 1;
  double cap = 0;          // most GM bytes per cycle it can use
};

struct Segment {
  double from, to;
  MemoryTimeline::Usage usage;
};

}  // namespace

std::vector<FluidPlacement> PlaceFluid(const std::vector<FluidTile>& tiles, const std::vector<int>& eligible,
                                       std::vector<uint64_t>& free_at, uint64_t not_before,
                                       const CoreMemoryRates& rates, MemoryTimeline& timeline) {
  std::vector<FluidPlacement> placed(tiles.size());
  if (tiles.empty() || eligible.empty()) return placed;
  std::vector<bool> busy(free_at.size(), false);
  std::vector<Running> running;
  std::vector<Segment> segments;
  size_t next_tile = 0;
  double t = static_cast<double>(not_before);

  // The next cycle an idle eligible core frees, at or after `after`.
  auto next_free = [&](double after) {
    double best = kInf;
    for (int c : eligible) {
      if (!busy[c]) best = std::min(best, std::max(after, static_cast<double>(free_at[c])));
    }
    return best;
  };

  while (next_tile < tiles.size() || !running.empty()) {
    // Idle cores already free take the next tiles, earliest-free first.
    if (next_tile < tiles.size()) {
      std::vector<int> idle;
      for (int c : eligible) {
        if (!busy[c] && static_cast<double>(free_at[c]) <= t) idle.push_back(c);
      }
      // Best fit: the core freed last goes first, so cores idle since long ago
      // stay free for a run that arrives earlier in modeled time.
      std::sort(idle.begin(), idle.end(), [&](int a, int b) { return free_at[a] != free_at[b] ? free_at[a] > free_at[b] : a < b; });
      for (int c : idle) {
        if (next_tile == tiles.size()) break;
        const FluidTile& ft = tiles[next_tile];
        Running r{next_tile, c};
        r.gm_bytes = ft.hbm_bytes + ft.l2_bytes;
        if (r.gm_bytes > 0) {
          r.hbm_fraction = ft.hbm_bytes / r.gm_bytes;
          r.cap = r.gm_bytes / static_cast<double>(std::max<uint64_t>(1, ft.duration));
          if (r.hbm_fraction > 0 && rates.hbm_bytes_per_cycle > 0) {
            r.cap = std::min(r.cap, rates.hbm_bytes_per_cycle / r.hbm_fraction);
          }
          if (r.hbm_fraction < 1 && rates.l2_bytes_per_cycle > 0) {
            r.cap = std::min(r.cap, rates.l2_bytes_per_cycle / (1 - r.hbm_fraction));
          }
        }
        placed[next_tile] = FluidPlacement{c, static_cast<uint64_t>(std::llround(t)), 0};
        busy[c] = true;
        running.push_back(r);
        ++next_tile;
      }
    }
    if (running.empty()) {
      t = next_free(t);
      continue;
    }

    // Rates until the next event.
    const MemoryTimeline::Usage used = timeline.At(t);
    std::vector<BandwidthDemand> demands;
    std::vector<size_t> with_memory;
    for (size_t i = 0; i < running.size(); ++i) {
      if (running[i].gm_bytes > 0) {
        demands.push_back({running[i].cap, running[i].hbm_fraction});
        with_memory.push_back(i);
      }
    }
    const std::vector<double> grants =
        MaxMinShare(demands, timeline.hbm_capacity() - used.hbm, timeline.l2_capacity() - used.l2);
    std::vector<double> progress(running.size());
    MemoryTimeline::Usage own;
    for (size_t i = 0; i < running.size(); ++i) {
      progress[i] = 1.0 / static_cast<double>(std::max<uint64_t>(1, tiles[running[i].tile].duration));
    }
    for (size_t j = 0; j < with_memory.size(); ++j) {
      Running& r = running[with_memory[j]];
      progress[with_memory[j]] = grants[j] / r.gm_bytes;
      own.hbm += grants[j] * r.hbm_fraction;
      own.l2 += grants[j] * (1 - r.hbm_fraction);
    }
    double next = timeline.NextChange(t);
    if (next_tile < tiles.size()) next = std::min(next, next_free(std::floor(t) + 1));
    for (size_t i = 0; i < running.size(); ++i) {
      if (progress[i] > 0) next = std::min(next, t + running[i].remaining / progress[i]);
    }
    if (!(next < kInf)) {
      // Nothing can progress (no capacity left, none ever freed): cannot happen
      // with positive capacities; finish at the tiles' own pace rather than hang.
      for (size_t i = 0; i < running.size(); ++i) {
        progress[i] = 1.0 / static_cast<double>(std::max<uint64_t>(1, tiles[running[i].tile].duration));
        next = std::min(next, t + running[i].remaining / progress[i]);
      }
    }
    segments.push_back({t, next, own});
    for (size_t i = 0; i < running.size(); ++i) running[i].remaining -= progress[i] * (next - t);
    t = next;

    // Tiles done by now free their cores at the next whole cycle.
    for (size_t i = 0; i < running.size();) {
      if (running[i].remaining > 1e-9) {
        ++i;
        continue;
      }
      FluidPlacement& p = placed[running[i].tile];
      p.end = std::max(p.start + tiles[running[i].tile].duration, static_cast<uint64_t>(std::ceil(t - 1e-6)));
      free_at[running[i].core] = p.end;
      busy[running[i].core] = false;
      running[i] = running.back();
      running.pop_back();
    }
  }
  for (const Segment& s : segments) timeline.Add(s.from, s.to, s.usage);
  return placed;
}

}  // namespace npu::device
