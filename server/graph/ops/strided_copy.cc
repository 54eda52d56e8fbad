#include "server/graph/ops/strided_copy.h"
#include "server/graph/ops/parallel_for.h"

#include <algorithm>
#include <cstring>

namespace npu::graph::ops {
namespace {

template <typename T>
void CopyRow(const std::byte* src, int64_t src_stride, std::byte* dst, int64_t dst_stride, int64_t n) {
  const T* s = reinterpret_cast<const T*>(src);
  T* d = reinterpret_cast<T*>(dst);
  for (int64_t i = 0; i < n; ++i) d[i * dst_stride] = s[i * src_stride];
}

void CopyRowBytes(const std::byte* src, int64_t src_stride, std::byte* dst, int64_t dst_stride, int64_t n,
                  size_t esize) {
  if (src_stride == 1 && dst_stride == 1) {
    std::memcpy(dst, src, static_cast<size_t>(n) * esize);
    return;
  }
  switch (esize) {
    case 1: return CopyRow<uint8_t>(src, src_stride, dst, dst_stride, n);
    case 2: return CopyRow<uint16_t>(src, src_stride, dst, dst_stride, n);
    case 4: return CopyRow<uint32_t>(src, src_stride, dst, dst_stride, n);
    default: return CopyRow<uint64_t>(src, src_stride, dst, dst_stride, n);
  }
}

}  // namespace

void CopyRegion(RunContext& ctx, const HostTensor& src, const HostTensor& dst, const StridedRegion& r) {
  const size_t esize = ElementSize(src.type().dtype);
  const int rank = static_cast<int>(r.shape.size());
  int64_t rows = 1;
  for (int d = 0; d + 1 < rank; ++d) rows *= r.shape[d];
  const int64_t inner = rank == 0 ? 1 : r.shape.back();
  if (rows == 0 || inner == 0) return;
  const int64_t src_inner = rank == 0 ? 1 : r.src_strides.back();
  const int64_t dst_inner = rank == 0 ? 1 : r.dst_strides.back();
  // The copy is split over all its elements, not its rows, so a long 1-D
  // region fills the chip too; a tile gets at least kMinCopyBytes.
  constexpr int64_t kMinCopyBytes = 4096;
  const int64_t total = rows * inner;
  const int64_t tiles = std::max<int64_t>(
      1, std::min<int64_t>(ctx.preset.vector_unit_cores(), total * static_cast<int64_t>(esize) / kMinCopyBytes));
  const size_t first = ctx.work.tiles.size();
  ctx.work.tiles.resize(first + static_cast<size_t>(tiles));
  ParallelFor(tiles, 2 * total, [&](int64_t t) {
    device::TileWork& w = ctx.work.tiles[first + static_cast<size_t>(t)];
    w.pipeline_steps = 0;
    const int64_t begin = total * t / tiles, end = total * (t + 1) / tiles;
    for (int64_t e = begin; e < end;) {
      const int64_t row = e / inner, col = e % inner;
      const int64_t len = std::min(inner - col, end - e);
      int64_t src_off = r.src_base + col * src_inner, dst_off = r.dst_base + col * dst_inner, rem = row;
      for (int d = rank - 2; d >= 0; --d) {
        const int64_t i = rem % r.shape[d];
        rem /= r.shape[d];
        src_off += i * r.src_strides[d];
        dst_off += i * r.dst_strides[d];
      }
      CopyRowBytes(src.data() + src_off * static_cast<int64_t>(esize), src_inner,
                   dst.mutable_data() + dst_off * static_cast<int64_t>(esize), dst_inner, len, esize);
      const uint64_t bytes = static_cast<uint64_t>(len) * esize;
      w.mte2_bytes += src_inner == 0 ? esize : bytes;
      w.mte3_bytes += bytes;
      w.scalar_instructions += 2;  // address setup + burst issue
      w.pipeline_steps += 1;
      e += len;
    }
    if (w.pipeline_steps == 0) w.pipeline_steps = 1;
  });
}

}  // namespace npu::graph::ops
