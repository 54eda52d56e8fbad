#include "server/graph/vector_tiling.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace npu::graph {

namespace {
constexpr int64_t kVectorRepeatBytes = 256;   // one repeat: 8 blocks x 32 B
constexpr int64_t kMaxRepeatsPerInstruction = 255;
constexpr int64_t kChunkAlign = 128;          // elements: a full fp16 repeat
// Elements a tile gets at least: a core is worth starting for a few repeats,
// not for one (its block start costs ~1000 cycles, see the preset).
constexpr int64_t kMinTileElements = 1024;
}  // namespace

VectorTiling PlanVectorTiles(int64_t elements, int64_t ub_bytes_per_element, const device::DevicePreset& preset) {
  VectorTiling t;
  const int64_t budget = static_cast<int64_t>(preset.ub_bytes) / 2;  // double buffering
  t.chunk = std::max<int64_t>(kChunkAlign, budget / std::max<int64_t>(1, ub_bytes_per_element) / kChunkAlign *
                                               kChunkAlign);
  t.ub_bytes = static_cast<uint64_t>(t.chunk * std::max<int64_t>(1, ub_bytes_per_element) * 2);
  if (elements == 0) return t;
  // As many tiles as there are vector cores, unless that would give a tile
  // fewer than kMinTileElements; each tile a whole number of chunk-aligned
  // elements, so every tile but the last starts on a repeat boundary.
  const int64_t cores = std::max<int64_t>(1, preset.vector_unit_cores());
  const int64_t wanted = std::max<int64_t>(1, std::min(cores, elements / kMinTileElements));
  t.per_tile = (elements + wanted - 1) / wanted;
  t.per_tile = (t.per_tile + kChunkAlign - 1) / kChunkAlign * kChunkAlign;
  t.chunk = std::min(t.chunk, t.per_tile);
  t.ub_bytes = static_cast<uint64_t>(t.chunk * std::max<int64_t>(1, ub_bytes_per_element) * 2);
  t.tiles = (elements + t.per_tile - 1) / t.per_tile;
  return t;
}

device::TileWork VectorChunkWork(int64_t elements, int64_t in_bytes, int64_t out_bytes, int64_t lane_bytes,
                                 int64_t passes) {
  device::TileWork w;
  const int64_t repeats = (elements * lane_bytes + kVectorRepeatBytes - 1) / kVectorRepeatBytes;
  const int64_t instructions = (repeats + kMaxRepeatsPerInstruction - 1) / kMaxRepeatsPerInstruction;
  w.vector_repeats = static_cast<uint64_t>(repeats * passes);
  w.vector_instructions = static_cast<uint64_t>(instructions * passes);
  w.scalar_instructions = static_cast<uint64_t>(4 + 2 * instructions * passes);  // loop + address setup
  w.mte2_bytes = static_cast<uint64_t>(in_bytes);
  w.mte3_bytes = static_cast<uint64_t>(out_bytes);
  w.pipeline_steps = 1;
  return w;
}

absl::Status CheckVectorTilingFits(const VectorTiling& tiling, const device::DevicePreset& preset) {
  if (tiling.ub_bytes <= preset.ub_bytes) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat("vector chunk of ", tiling.chunk, " elements needs ",
                                                    tiling.ub_bytes, " bytes of UB (double-buffered) but ",
                                                    preset.name, " has ", preset.ub_bytes));
}

device::OpWork ElementwiseOpWork(int64_t elements, int64_t in_elem_bytes, int64_t out_elem_bytes, int64_t lane_bytes,
                                 int64_t operands, int64_t passes, const device::DevicePreset& preset) {
  device::OpWork work;
  work.task_type = device::TaskType::kAiVectorCore;
  const VectorTiling tiling = PlanVectorTiles(elements, lane_bytes * operands, preset);
  for (int64_t t = 0; t < tiling.tiles; ++t) {
    const int64_t begin = tiling.TileBegin(t), end = std::min(elements, begin + tiling.per_tile);
    device::TileWork tile;
    tile.pipeline_steps = 0;  // one step per chunk
    for (int64_t s = begin; s < end; s += tiling.chunk) {
      const int64_t len = std::min(tiling.chunk, end - s);
      tile += VectorChunkWork(len, len * in_elem_bytes, len * out_elem_bytes, lane_bytes, passes);
    }
    work.tiles.push_back(std::move(tile));
  }
  return work;
}

}  // namespace npu::graph
