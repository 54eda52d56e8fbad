#include "server/graph/cube_tiling.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace npu::graph {
namespace {

constexpr uint64_t kHalf = 2, kFloat = 4, kDoubleBuffer = 2;
constexpr int64_t kL0KDepth = 64;  // K elements of one L0A/L0B slice: the Cube consumes 16 per cycle

struct Footprint {
  uint64_t l0a, l0b, l0c, l1;
};

Footprint FootprintOf(const kernels::CubeTileShape& t) {
  const uint64_t m = t.m, n = t.n, k = t.k;
  return Footprint{m * kL0KDepth * kHalf * kDoubleBuffer, kL0KDepth * n * kHalf * kDoubleBuffer,
                   m * n * kFloat, (m + n) * k * kHalf * kDoubleBuffer};
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
      if (next.m <= 256 && next.n <= 256 && CheckCubeTileFits(next, preset).ok()) {
        t = next;
        grew = true;
      }
    }
  }
  while (t.k < 512) {
    kernels::CubeTileShape next = t;
    next.k *= 2;
    if (!CheckCubeTileFits(next, preset).ok()) break;
    t = next;
  }
  return t;
}

void AppendCubeTiles(const std::vector<kernels::CubeTileCounts>& counts, int64_t m, int64_t n,
                     const kernels::CubeTileShape& tile, uint64_t a_panel_key, uint64_t b_panel_key,
                     device::OpWork& work) {
  // Keys: operand in the top bits, batch key in the middle, panel origin below.
  auto key = [](uint64_t operand, uint64_t batch_key, int64_t origin) {
    return (operand << 62) ^ (batch_key << 24) ^ static_cast<uint64_t>(origin);
  };
  for (const auto& c : counts) {
    device::TileWork w;
    w.cube_fractals = c.fractal_ops;
    w.mte2_bytes = c.mte2_bytes;
    w.mte1_bytes = c.mte1_bytes;
    w.fixpipe_bytes = c.fixpipe_bytes;
    w.scalar_instructions = 8 * c.k_steps;  // per k step: loop, addresses, sync flags
    w.pipeline_steps = std::max<uint64_t>(1, c.k_steps);
    // mte2_bytes = (mt + nt) * k * 2: the A row panel and the B column panel.
    const uint64_t mt = static_cast<uint64_t>(std::min(tile.m, m - c.m0));
    const uint64_t nt = static_cast<uint64_t>(std::min(tile.n, n - c.n0));
    const uint64_t per_row = c.mte2_bytes / std::max<uint64_t>(1, mt + nt);
    w.shared_reads = {{key(1, a_panel_key, c.m0), per_row * mt}, {key(2, b_panel_key, c.n0), per_row * nt}};
    work.tiles.push_back(std::move(w));
  }
}

}  // namespace npu::graph
