// The driver: the tiles of C (BLIS's jc/ic loops, one tile = one Cube core's
// work) spread over the OpenMP team, with B shared between them.
#include "kernels/cube_gemm.h"

#include <algorithm>
#include <atomic>
#include <memory>

#include "kernels/cube_dispatch.h"
#include "kernels/cube_pack.h"
#include "kernels/cube_packed_b.h"
#include "kernels/cube_tile.h"
#include "kernels/cube_tile_counts.h"
#include "kernels/cube_workspace.h"
#include "kernels/exact_gemm.h"
#include "kernels/openmp.h"
#include "kernels/parallel_grain.h"

namespace npu::kernels {
namespace {

std::atomic<uint64_t> g_call_id{0};

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Largest B that is packed once per call; beyond it (or with tiles not on fractal
// column boundaries) each tile packs its own B blocks.
constexpr int64_t kMaxSharedBBytes = int64_t{64} << 20;

}  // namespace

CubeWorkspace& CallerCubeWorkspace() {
  static thread_local CubeWorkspace workspace;
  return workspace;
}

// Saturation mode rounds an operand that IEEE would make inf or NaN to +-65504
// or 0, which hides it from the result; the float status still counts it (as
// the Vector stores count theirs), so an overflow check sees a NaN input.
uint64_t SaturatedOperands(const GemmProblem& p) {
  uint64_t count = 0;
  if (p.a_source != nullptr) {
    count += p.a_source->SaturatedOperands(p.batch, p.m);
  } else if (p.a_type == ElemType::kFloat32) {
    count += CountSaturatedOperands(OperandView{p.a, p.a_type, p.lda, p.trans_a}, p.m, p.k,
                                    p.a_batch_stride == 0 ? 1 : p.batch, p.a_batch_stride);
  }
  if (p.packed_b != nullptr) {
    count += p.packed_b->saturated_operands();
  } else if (p.b_type == ElemType::kFloat32) {
    count += CountSaturatedOperands(OperandView{p.b, p.b_type, p.ldb, p.trans_b}, p.k, p.n,
                                    p.b_batch_stride == 0 ? 1 : p.batch, p.b_batch_stride);
  }
  return count;
}

void CubeGemm(const GemmProblem& p, const CubeTileShape& tile, std::vector<CubeTileCounts>* tiles) {
  if (p.exact_operands) return ExactGemm(p, tile, tiles);
  const int64_t tm = p.m > 0 ? CeilDiv(p.m, tile.m) : 0;
  const int64_t tn = p.n > 0 ? CeilDiv(p.n, tile.n) : 0;
  const int64_t total = p.batch * tm * tn;
  if (tiles) tiles->assign(total, CubeTileCounts{});
  if (total == 0) return;
  CubeCall call{&p, &ActiveCubeKernels(), g_call_id.fetch_add(1) + 1, SharedBPanels{}};

  // Everything the region uses is allocated here, on the calling thread: an
  // exception may not leave an OpenMP region (the process would terminate).
  CubeWorkspace& ws = CallerCubeWorkspace();
  const int threads = std::max(1, omp_get_max_threads());
  const CubeTileBufferSizes sizes = TileBufferSizes(tile, p.m, p.n, p.k);
  ws.Reserve(threads, sizes.a_floats, sizes.b_halves, sizes.c_floats);

  // B is shared by every tile of a column of tiles. Pre-packed B (constant
  // weights) is used as it is. Otherwise, when it is not too big, it is packed
  // during the call into whole-K fractal columns, each group by the first tile
  // that reads it: packing it per tile cost 5-10% of the GEMM (strided reads
  // from L3). This is host blocking only; the counts still charge each tile its
  // own MTE1 traffic, as the device does.
  std::unique_ptr<std::atomic<int>[]> item_state;
  if (p.packed_b != nullptr) {
    call.b = ViewOf(*p.packed_b);
  } else {
    const int64_t b_batches = p.b_batch_stride == 0 ? 1 : p.batch;
    const int64_t b_panels = CeilDiv(p.n, 16);
    const int64_t panel_stride = CubePanelStride(p.k);
    const int64_t b_halves = b_batches * b_panels * panel_stride;
    if (p.k > 0 && tile.n % 16 == 0 && b_halves * 2 <= kMaxSharedBBytes) {
      const int64_t items_per_batch = CeilDiv(b_panels, SharedBPanels::kPanelsPerItem);
      ws.shared_b.Reserve(static_cast<size_t>(b_halves));
      item_state = std::make_unique<std::atomic<int>[]>(b_batches * items_per_batch);
      for (int64_t i = 0; i < b_batches * items_per_batch; ++i) {
        item_state[i].store(SharedBPanels::kUnpacked, std::memory_order_relaxed);
      }
      call.b = SharedBPanels{ws.shared_b.data(), panel_stride, b_batches > 1 ? b_panels * panel_stride : 0,
                             items_per_batch, item_state.get()};
    }
  }

  // Tiles are independent and each output element is computed whole by one thread,
  // so the thread count cannot change results. The server gives each device one
  // compute thread team and queues requests in front of it, so this region never
  // oversubscribes the host cores. Each thread takes a contiguous run of tiles
  // (static partition: a tile row stays on one thread, which reuses its packed A)
  // and starts each row at its own column offset, so that threads begin by packing
  // different B items instead of waiting for each other. Nothing in here throws.
  auto run_share = [&](int64_t id, int64_t team) noexcept {
    CubeThreadBuffers& buf = *ws.threads[static_cast<size_t>(id)];
    const int64_t lo = total * id / team, hi = total * (id + 1) / team;
    const int64_t shift = tn * id / team;
    for (int64_t row_lo = lo, row_hi = lo; row_lo < hi; row_lo = row_hi) {
      row_hi = std::min(hi, (row_lo / tn + 1) * tn);
      const int64_t first = row_lo % tn, len = row_hi - row_lo;
      const int64_t rotate = shift > first && shift < first + len ? shift - first : 0;
      for (int64_t j = 0; j < len; ++j) {
        const int64_t t = row_lo + (j + rotate) % len;
        if (p.cancel != nullptr && p.cancel->load(std::memory_order_relaxed)) return;  // caller gave up
        const int64_t batch = t / (tm * tn);
        const int64_t ic = (t / tn % tm) * tile.m, jc = (t % tn) * tile.n;
        const int64_t mt = std::min(tile.m, p.m - ic), nt = std::min(tile.n, p.n - jc);
        const uint64_t overflow = RunCubeTile(call, buf, batch, ic, mt, jc, nt);
        if (tiles) {
          (*tiles)[t] = CountCubeTile(p, tile, batch, ic, mt, jc, nt);
          (*tiles)[t].overflow_elements = overflow;
        }
      }
    }
  };
  // A region costs a team wake-up and a barrier even for one thread or one
  // tile; a small GEMM (some microseconds on one core) is not worth one either
  // (parallel_grain.h).
  const double macs = static_cast<double>(p.batch) * static_cast<double>(p.m) * static_cast<double>(p.n) *
                      static_cast<double>(p.k);
  if (threads == 1 || total == 1 || !WorthAParallelRegion(macs, kParallelGrainMacs)) {
    run_share(0, 1);
  } else {
#pragma omp parallel num_threads(threads)
    run_share(omp_get_thread_num(), omp_get_num_threads());
  }
  if (tiles && p.saturate_fp16) (*tiles)[0].overflow_elements += SaturatedOperands(p);
}

}  // namespace npu::kernels
