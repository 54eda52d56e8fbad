#include "server/graph/ops/dim_map_copy.h"

#include <algorithm>
#include <cstring>

#include "server/graph/ops/parallel_for.h"

namespace npu::graph::ops {

void DimMap::SetMaps(std::vector<std::vector<int64_t>> maps) {
  row.clear();
  if (maps.empty()) {  // a scalar: one element
    row.push_back(Run{0, 0, 1, 1});
    outer.clear();
    return;
  }
  const std::vector<int64_t> last = std::move(maps.back());
  maps.pop_back();
  outer = std::move(maps);
  const int64_t n = static_cast<int64_t>(last.size());
  for (int64_t o = 0; o < n;) {
    Run r{o, last[o], 1, 1};
    if (r.src < 0) {
      while (o + r.len < n && last[o + r.len] < 0) ++r.len;
    } else if (o + 1 < n && last[o + 1] >= 0) {
      r.step = last[o + 1] - last[o];  // ascending burst, a reflection (-1) or a repeat (0)
      if (r.step < -1 || r.step > 1) r.step = 1;
      while (o + r.len < n && last[o + r.len] >= 0 && last[o + r.len] - last[o + r.len - 1] == r.step) ++r.len;
    }
    row.push_back(r);
    o += r.len;
  }
}

namespace {

template <typename T>
void CopyRun(const std::byte* src, int64_t step, std::byte* dst, int64_t n) {
  const T* s = reinterpret_cast<const T*>(src);
  T* d = reinterpret_cast<T*>(dst);
  for (int64_t i = 0; i < n; ++i) d[i] = s[i * step];
}

void CopyRunBytes(const std::byte* src, int64_t step, std::byte* dst, int64_t n, size_t esize) {
  if (step == 1) {
    std::memcpy(dst, src, static_cast<size_t>(n) * esize);
    return;
  }
  switch (esize) {
    case 1: return CopyRun<uint8_t>(src, step, dst, n);
    case 2: return CopyRun<uint16_t>(src, step, dst, n);
    case 4: return CopyRun<uint32_t>(src, step, dst, n);
    default: return CopyRun<uint64_t>(src, step, dst, n);
  }
}

void Fill(std::byte* dst, int64_t n, const std::byte* value, size_t esize) {
  for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * static_cast<int64_t>(esize), value, esize);
}

}  // namespace

void CopyByDimMap(RunContext& ctx, const HostTensor& src, const HostTensor& dst, const DimMap& map,
                  const std::byte* fill) {
  const size_t esize = ElementSize(dst.type().dtype);
  const int rank = static_cast<int>(map.out.size());
  int64_t rows = 1;
  for (int d = 0; d + 1 < rank; ++d) rows *= map.out[d];
  const int64_t inner = rank == 0 ? 1 : map.out.back();
  if (rows == 0 || inner == 0) return;
  std::vector<int64_t> in_strides(static_cast<size_t>(rank), 1);
  for (int d = rank - 2; d >= 0; --d) in_strides[d] = in_strides[d + 1] * map.in[d + 1];
  const int64_t tiles = std::max<int64_t>(1, std::min<int64_t>(ctx.preset.vector_unit_cores(), rows));
  const size_t first = ctx.work.tiles.size();
  ctx.work.tiles.resize(first + static_cast<size_t>(tiles));
  const int64_t row_bytes = inner * static_cast<int64_t>(esize);
  ParallelFor(tiles, 2 * rows * inner, [&](int64_t t) {
    device::TileWork& w = ctx.work.tiles[first + static_cast<size_t>(t)];
    w.pipeline_steps = 0;
    for (int64_t r = rows * t / tiles; r < rows * (t + 1) / tiles; ++r) {
      std::byte* out = dst.mutable_data() + r * row_bytes;
      int64_t src_row = 0, rem = r;
      bool filled = false;
      for (int d = rank - 2; d >= 0; --d) {
        const int64_t i = map.outer[d][rem % map.out[d]];
        rem /= map.out[d];
        if (i < 0) filled = true;
        src_row += i * in_strides[d];
      }
      if (filled) {
        Fill(out, inner, fill, esize);
        w.mte3_bytes += row_bytes;
        w.vector_instructions += 1;
        w.scalar_instructions += 2;
        ++w.pipeline_steps;
        continue;
      }
      for (const DimMap::Run& run : map.row) {
        const uint64_t bytes = static_cast<uint64_t>(run.len) * esize;
        std::byte* o = out + run.out * static_cast<int64_t>(esize);
        if (run.src < 0) {
          Fill(o, run.len, fill, esize);
          w.vector_instructions += 1;
        } else {
          CopyRunBytes(src.data() + (src_row + run.src) * static_cast<int64_t>(esize), run.step, o, run.len, esize);
          w.mte2_bytes += run.step == 0 ? esize : bytes;
        }
        w.mte3_bytes += bytes;
        w.scalar_instructions += 2;  // address setup + burst issue
        ++w.pipeline_steps;
      }
    }
    if (w.pipeline_steps == 0) w.pipeline_steps = 1;
  });
}

}  // namespace npu::graph::ops
