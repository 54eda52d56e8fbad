#include "server/graph/cube_tiling.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "server/device/cube_drain.h"

namespace npu::graph {
namespace {

constexpr uint64_t kHalf = 2, kFloat = 4, kDoubleBuffer = 2;
constexpr int64_t kL0KDepth = 64;    // K elements of one L0A/L0B slice: the Cube consumes 16 per cycle
constexpr int64_t kMaxEdge = kMaxCubeTileEdge;
constexpr int64_t kMaxL1Depth = 512;  // the deepest K panel kept in L1
constexpr uint64_t kScalarPerKStep = 8;  // loop, addresses, sync flags

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

struct Footprint {
  uint64_t l0a, l0b, l0c, l1;
};

Footprint FootprintOf(const kernels::CubeTileShape& t) {
  const uint64_t m = t.m, n = t.n, k = t.k;
  return Footprint{m * kL0KDepth * kHalf * kDoubleBuffer, kL0KDepth * n * kHalf * kDoubleBuffer,
                   m * n * kFloat, (m + n) * k * kHalf * kDoubleBuffer};
}

// The deepest L1 panel (a multiple of kL0KDepth, <= kMaxL1Depth) an m x n tile
// fits with; 0 when none does.
int64_t DeepestFit(int64_t m, int64_t n, const device::DevicePreset& preset) {
  int64_t best = 0;
  for (int64_t k = kL0KDepth; k <= kMaxL1Depth; k *= 2) {
    if (CheckCubeTileFits({m, n, k}, preset).ok()) best = k;
  }
  return best;
}

// Estimated cycles of one tiling: waves of tiles on the cube cores, each tile
// as long as its busiest unit (Cube, MTE1, MTE2 from L2) plus its first load
// and its drain, plus the block start.
double EstimateCycles(int64_t batch, int64_t m, int64_t n, int64_t k, int64_t tm, int64_t tn, int64_t depth,
                      int64_t split, const device::DevicePreset& preset) {
  const int64_t tiles = batch * CeilDiv(m, tm) * CeilDiv(n, tn) * split;
  const int64_t waves = CeilDiv(tiles, preset.cube_cores);
  const int64_t ks = CeilDiv(CeilDiv(k, split), 16) * 16;
  const double fm = static_cast<double>(CeilDiv(tm, 16)), fn = static_cast<double>(CeilDiv(tn, 16)),
               fk = static_cast<double>(ks / 16);
  const double cube = fm * fn * fk;
  const double mte1 = fm * fk * 512 / preset.mte1_a_bytes_per_cycle + fn * fk * 512 / preset.mte1_b_bytes_per_cycle;
  const double mte2 = static_cast<double>((tm + tn) * ks * 2) / preset.l2_bytes_per_cycle;
  const double steps = static_cast<double>(CeilDiv(ks, depth));
  const double out = static_cast<double>(tm * tn) * (split > 1 ? 4.0 : 2.0);
  const double drain = out / (preset.separated() ? preset.fixpipe_bytes_per_cycle : preset.mte3_bytes_per_cycle);
  const double tile = static_cast<double>(preset.block_start_cycles) + std::max({cube, mte1, mte2}) + mte2 / steps +
                      drain / steps;
  return static_cast<double>(waves) * tile;
}

// The order a CANN-style tiler issues the C tiles of one batch in: bands of
// `band` tile rows, column by column within a band, so the tiles running
// together (one wave of block_dim) read few A row panels and few B column
// panels, and a band's A panels stay in the L2 while its B panels stream once.
// A wave of R rows x C columns reads R + C panels; R = sqrt(cores x tn / tm)
// makes that the least for the tile's panel sizes.
std::vector<size_t> SwizzledOrder(const std::vector<kernels::CubeTileCounts>& counts, const CubePlan& plan,
                                  int64_t m, int64_t n, int cores) {
  const int64_t rows = CeilDiv(m, plan.tile.m), cols = CeilDiv(n, plan.tile.n);
  const double ideal = std::sqrt(static_cast<double>(cores) * static_cast<double>(plan.tile.n) /
                                 static_cast<double>(plan.tile.m));
  const int64_t band = std::clamp<int64_t>(std::llround(ideal), 1, std::max<int64_t>(1, rows));
  std::vector<size_t> order(counts.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto rank = [&](const kernels::CubeTileCounts& c) {
    const int64_t r = c.m0 / plan.tile.m, col = c.n0 / plan.tile.n;
    return ((c.batch * CeilDiv(rows, band) + r / band) * cols + col) * band + r % band;
  };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return rank(counts[a]) < rank(counts[b]); });
  return order;
}

}  // namespace

absl::Status CheckCubeTileFits(const kernels::CubeTileShape& tile, const device::DevicePreset& preset) {
  if (tile.m <= 0 || tile.n <= 0 || tile.k <= 0 || tile.m % 16 || tile.n % 16 || tile.k % kL0KDepth) {
    return absl::FailedPreconditionError(absl::StrCat("cube tile ", tile.m, "x", tile.n, "x", tile.k,
                                                      " is not a positive multiple of the 16x16 fractal"));
  }
  const Footprint f = FootprintOf(tile);
  auto over = [&](const char* buffer, uint64_t need, uint64_t have) {
    return absl::FailedPreconditionError(absl::StrCat("cube tile ", tile.m, "x", tile.n, "x", tile.k, " needs ",
                                                      need, " bytes of ", buffer, " but ", preset.name, " has ",
                                                      have));
  };
  if (f.l0a > preset.l0a_bytes) return over("L0A", f.l0a, preset.l0a_bytes);
  if (f.l0b > preset.l0b_bytes) return over("L0B", f.l0b, preset.l0b_bytes);
  if (f.l0c > preset.l0c_bytes) return over("L0C", f.l0c, preset.l0c_bytes);
  if (f.l1 > preset.l1_bytes) return over("L1", f.l1, preset.l1_bytes);
  return absl::OkStatus();
}

kernels::CubeTileShape CubeTileForPreset(const device::DevicePreset& preset) {
  // Grow m and n in fractal steps while everything fits, then deepen k in L1.
  kernels::CubeTileShape t{16, 16, kL0KDepth};
  for (bool grew = true; grew;) {
    grew = false;
    for (int64_t* dim : {&t.m, &t.n}) {
      kernels::CubeTileShape next = t;
      (dim == &t.m ? next.m : next.n) += 16;
      if (next.m <= kMaxEdge && next.n <= kMaxEdge && CheckCubeTileFits(next, preset).ok()) {
        t = next;
        grew = true;
      }
    }
  }
  t.k = std::max<int64_t>(kL0KDepth, DeepestFit(t.m, t.n, preset));
  return t;
}

CubePlan PlanCubeTiles(int64_t batch, int64_t m, int64_t n, int64_t k, const device::DevicePreset& preset) {
  CubePlan best{CubeTileForPreset(preset), 1};
  if (batch <= 0 || m <= 0 || n <= 0 || k <= 0) return best;
  // Edges: every multiple of 16 up to the padded problem edge and kMaxEdge.
  auto edges = [](int64_t dim) {
    std::vector<int64_t> e;
    const int64_t padded = CeilDiv(dim, 16) * 16;
    for (int64_t v = 16; v <= std::min(padded, kMaxEdge); v += 16) e.push_back(v);
    return e;
  };
  double best_cycles = std::numeric_limits<double>::infinity();
  int64_t best_tiles = 0;
  for (int64_t tm : edges(m)) {
    for (int64_t tn : edges(n)) {
      const int64_t depth = DeepestFit(tm, tn, preset);
      if (depth == 0) continue;
      const int64_t tiles_mn = batch * CeilDiv(m, tm) * CeilDiv(n, tn);
      // Split K only while the C tiles alone leave cube cores idle and each
      // slice keeps at least one L1 panel.
      for (int64_t split = 1; split == 1 || (tiles_mn * split <= preset.cube_cores && CeilDiv(k, split) >= depth);
           split *= 2) {
        const double cycles = EstimateCycles(batch, m, n, k, tm, tn, depth, split, preset);
        const int64_t tiles = tiles_mn * split;
        // Ties (within 0.1%) go to fewer, larger tiles.
        if (cycles < best_cycles * 0.999 || (cycles <= best_cycles * 1.001 && tiles < best_tiles)) {
          best_cycles = std::min(best_cycles, cycles);
          best_tiles = tiles;
          best = CubePlan{{tm, tn, depth}, split};
        }
      }
    }
  }
  return best;
}

void AppendCubeTiles(const std::vector<kernels::CubeTileCounts>& counts, int64_t m, int64_t n, int64_t k,
                     const CubePlan& plan, uint64_t a_panel_key, uint64_t b_panel_key,
                     const device::DevicePreset& preset, device::OpWork& work) {
  // Keys: operand in the top bits, batch key in the middle, panel origin and K slice below.
  auto key = [](uint64_t operand, uint64_t batch_key, int64_t origin, int64_t slice) {
    return (operand << 62) ^ (batch_key << 24) ^ (static_cast<uint64_t>(slice) << 48) ^ static_cast<uint64_t>(origin);
  };
  const int64_t split = std::max<int64_t>(1, plan.split_k);
  const int64_t slice_k = CeilDiv(CeilDiv(k, split), 16) * 16;
  for (size_t index : SwizzledOrder(counts, plan, m, n, preset.cube_cores)) {
    const kernels::CubeTileCounts& c = counts[index];
    const int64_t mt = std::min(plan.tile.m, m - c.m0), nt = std::min(plan.tile.n, n - c.n0);
    const uint64_t fm = static_cast<uint64_t>(CeilDiv(mt, 16)), fn = static_cast<uint64_t>(CeilDiv(nt, 16));
    for (int64_t s = 0; s < split; ++s) {
      // The whole tile (split 1) takes the kernel's counts as they are; a K
      // slice takes its share of them.
      const int64_t k0 = s * slice_k, kd = split == 1 ? k : std::max<int64_t>(0, std::min(slice_k, k - k0));
      if (kd == 0) continue;
      const uint64_t fk = static_cast<uint64_t>(CeilDiv(kd, 16));
      device::TileWork w;
      w.cube_fractals = split == 1 ? c.fractal_ops : fm * fn * fk;
      if (s == 0) w.overflow_elements = c.overflow_elements;  // what FixPipe counted (the float status)
      w.mte2_bytes = split == 1 ? c.mte2_bytes : static_cast<uint64_t>((mt + nt) * kd * 2);
      w.mte1_a_bytes = fm * fk * 512;
      w.mte1_b_bytes = fn * fk * 512;
      const uint64_t k_steps = static_cast<uint64_t>(CeilDiv(kd, plan.tile.k));
      w.scalar_instructions = kScalarPerKStep * k_steps;
      w.pipeline_steps = std::max<uint64_t>(1, k_steps);
      // A slice writes fp32 partials; the whole tile writes the output type.
      const uint64_t acc = static_cast<uint64_t>(mt * nt) * 4;
      device::DrainCubeTile(acc, split == 1 ? c.fixpipe_bytes : acc, preset, w);
      // mte2_bytes = (mt + nt) * kd * 2: the A row panel and the B column panel.
      const uint64_t per_row = w.mte2_bytes / static_cast<uint64_t>(mt + nt);
      w.shared_reads = {{key(1, a_panel_key, c.m0, s), per_row * static_cast<uint64_t>(mt), 0},
                        {key(2, b_panel_key, c.n0, s), per_row * static_cast<uint64_t>(nt), 1}};
      work.tiles.push_back(std::move(w));
    }
  }
}

}  // namespace npu::graph
