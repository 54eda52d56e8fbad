#include "kernels/cube_tile.h"

#include <algorithm>
#include <cstring>

#include "kernels/cube_macro_kernel.h"
#include "kernels/cube_pack.h"
#include "kernels/fixpipe.h"

namespace npu::kernels {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

const void* Offset(const void* base, ElemType t, int64_t elems) {
  const size_t size = t == ElemType::kFloat16 ? sizeof(half_bits) : sizeof(float);
  return static_cast<const char*>(base) + elems * static_cast<int64_t>(size);
}

void PackTileA(const CubeCall& call, CubeThreadBuffers& buf, int64_t batch, int64_t m0, int64_t mt, float* apack) {
  const GemmProblem& p = *call.p;
  if (buf.a_call == call.id && buf.a_batch == (p.a_batch_stride == 0 && !p.a_source ? 0 : batch) && buf.a_m0 == m0) {
    return;  // this thread's previous tile was in the same row
  }
  if (p.a_source != nullptr) {
    p.a_source->Pack(batch, m0, mt, p.k, call.kernels->mr, p.saturate_fp16, apack);
  } else {
    const OperandView a{Offset(p.a, p.a_type, batch * p.a_batch_stride), p.a_type, p.lda, p.trans_a};
    PackCubeA(a, m0, mt, p.k, call.kernels->mr, p.saturate_fp16, apack);
  }
  buf.a_call = call.id;
  buf.a_batch = p.a_batch_stride == 0 && !p.a_source ? 0 : batch;
  buf.a_m0 = m0;
}

}  // namespace

uint64_t CubeWriteBack(const GemmProblem& p, const float* l0c, int64_t ldc, int64_t batch, int64_t m0, int64_t mt,
                   int64_t n0, int64_t nt) {
  const FixPipeConfig fix{p.bias == nullptr ? nullptr : p.bias + batch * p.bias_batch_stride, p.epilogue, p.c_type,
                          p.saturate_fp16, batch};
  const int64_t c_size = p.c_type == ElemType::kFloat16 ? sizeof(half_bits) : sizeof(float);
  char* c = static_cast<char*>(p.c) + batch * p.c_batch_stride * c_size;
  uint64_t overflow = 0;
  if (p.c_layout == CubeOutputLayout::kRowMajor) {
    for (int64_t i = 0; i < mt; ++i) {
      const int64_t offset = (m0 + i) * p.ldc + n0;
      overflow += FixPipeRow(l0c + i * ldc, n0, nt, offset, fix, c + offset * c_size);
    }
    return overflow;
  }
  // Channel-major: each column is a channel, contiguous over the pixels of one image.
  const int64_t rows = p.c_image_rows;
  for (int64_t r0 = m0; r0 < m0 + mt;) {
    const int64_t image = r0 / rows, pixel = r0 % rows;
    const int64_t run = std::min(m0 + mt - r0, rows - pixel);
    const int64_t offset = image * p.c_image_stride + n0 * rows + pixel;
    overflow += FixPipeColumns(l0c + (r0 - m0) * ldc, ldc, run, n0, nt, offset, rows, fix, c + offset * c_size);
    r0 += run;
  }
  return overflow;
}

CubeTileBufferSizes TileBufferSizes(const CubeTileShape& tile, int64_t m, int64_t n, int64_t k) {
  const int64_t rows = std::min(tile.m, m), panels = CeilDiv(std::min(tile.n, n), 16);
  return CubeTileBufferSizes{static_cast<size_t>(rows * k + kCubePackASlack),
                             static_cast<size_t>(panels * CubePanelStride(std::min(kCubeKc, k))),
                             static_cast<size_t>(rows * panels * 16)};
}

uint64_t RunCubeTile(const CubeCall& call, CubeThreadBuffers& buf, int64_t batch, int64_t m0, int64_t mt, int64_t n0,
                     int64_t nt) {
  const GemmProblem& p = *call.p;
  const CubeMicroKernelSet& ks = *call.kernels;
  const int64_t k = p.k;
  float* apack = buf.a.data();
  PackTileA(call, buf, batch, m0, mt, apack);

  // Without a shared packed B, B is packed one k block at a time just before use,
  // so the block (kCubeKc x nt halves, 64 KiB for nt = 128) is still in L2 when
  // the Cube reads it.
  const bool shared = call.b.data != nullptr;
  EnsurePanelsPacked(p, call.b, batch, n0, nt);
  const OperandView b{shared ? nullptr : Offset(p.b, p.b_type, batch * p.b_batch_stride), p.b_type, p.ldb, p.trans_b};
  const int64_t panels = CeilDiv(nt, 16);
  const int64_t panel_stride = shared ? call.b.panel_stride : CubePanelStride(std::min(kCubeKc, k));
  half_bits* bpack = buf.b.data();

  // L0C: fp32 accumulators, padded to whole fractal columns. It stays a separate,
  // compact buffer even for plain fp32 output: accumulating in C itself saved the
  // copy (~2%) but cost 5-15% at 1024^3, because C's rows are often 4 KiB apart
  // and a micro-tile's rows then collide in one L1 set.
  const int64_t ldc = panels * 16;
  float* l0c = buf.c.data();
  if (k == 0) std::memset(l0c, 0, mt * ldc * sizeof(float));
  const int64_t calls_per_block = CubeMacroKernelCalls(ks, mt, panels);
  for (int64_t pc = 0; pc < k; pc += kCubeKc) {
    const int64_t kc = std::min(kCubeKc, k - pc);
    BlockPrefetcher next_b;
    if (!shared) {
      PackCubeB(b, n0, nt, pc, kc, panel_stride, p.saturate_fp16, bpack);
      // While the Cube works on this block, pull the next B block (of this tile, or
      // the first of the tile to the right, which this thread most likely runs next)
      // towards L2.
      if (pc + kCubeKc < k) {
        next_b = BlockPrefetcher(b, n0, nt, pc + kCubeKc, std::min(kCubeKc, k - pc - kCubeKc), calls_per_block);
      } else if (n0 + nt < p.n) {
        next_b = BlockPrefetcher(b, n0 + nt, std::min(nt, p.n - n0 - nt), 0, std::min(kCubeKc, k), calls_per_block);
      }
    }
    CubeMacroBlock blk;
    blk.mt = mt;
    blk.panels = panels;
    blk.k = k;
    blk.k0 = pc;
    blk.kc = kc;
    blk.a = apack;
    blk.b = shared ? call.b.Panels(batch, n0) + pc * 16 : bpack;
    blk.panel_stride = panel_stride;
    blk.l0c = l0c;
    blk.ldc = ldc;
    CubeMacroKernel(ks, blk, next_b);
  }
  return CubeWriteBack(p, l0c, ldc, batch, m0, mt, n0, nt);
}

}  // namespace npu::kernels
