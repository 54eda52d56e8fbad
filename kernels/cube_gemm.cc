// The tile driver: for each output tile, MTE1 packing (cube_pack), the Cube's
// macro-kernel over packed fractals (cube_microkernel_*), FixPipe write-back
// (fixpipe), and the tile's counts.
#include "kernels/cube_gemm.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>

#include "kernels/cpu_features.h"
#include "kernels/cube_microkernel.h"
#include "kernels/cube_pack.h"
#include "kernels/cube_tile_counts.h"
#include "kernels/fixpipe.h"
#include "kernels/openmp.h"

namespace npu::kernels {
namespace {

// Host blocking of K inside a tile: a B block of kKc x 32 halves (16 KiB) stays in
// L1 while A slivers stream from L2. It only decides where the fp32 accumulators
// are parked in L0C between k blocks (an exact store and reload), never the order
// of the sum, so it is free to differ from the simulated tile.k.
constexpr int64_t kKc = 256;

std::atomic<SimdPath> g_forced_path{SimdPath::kAuto};
std::atomic<uint64_t> g_call_generation{0};

bool CanRun(SimdPath p) {
  const CpuFeatures& f = HostCpuFeatures();
  switch (p) {
    case SimdPath::kAvx512: return f.avx512f && f.fma && f.f16c;
    case SimdPath::kAvx2: return f.avx2 && f.fma && f.f16c;
    default: return true;
  }
}

SimdPath ResolvePath(SimdPath want) {
  if (want != SimdPath::kAuto && CanRun(want)) return want;
  if (want == SimdPath::kPortable) return want;
  if (want != SimdPath::kAvx2 && CanRun(SimdPath::kAvx512)) return SimdPath::kAvx512;
  return CanRun(SimdPath::kAvx2) ? SimdPath::kAvx2 : SimdPath::kPortable;
}

const CubeMicroKernelSet& KernelsFor(SimdPath p) {
  switch (p) {
    case SimdPath::kAvx512: return kAvx512CubeKernels;
    case SimdPath::kAvx2: return kAvx2CubeKernels;
    default: return kPortableCubeKernels;
  }
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Grow-only, 64-byte aligned: pages are touched once per thread, not per tile
// (first touch costs ~11 us per 4 KiB here, see ANCHORS.md).
template <typename T>
class Scratch {
 public:
  Scratch() = default;
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() { std::free(data_); }
  T* Get(size_t n) {
    if (n > capacity_) {
      std::free(data_);
      const size_t bytes = (std::max<size_t>(n, 1) * sizeof(T) + 63) / 64 * 64;
      data_ = static_cast<T*>(std::aligned_alloc(64, bytes));
      capacity_ = bytes / sizeof(T);
    }
    return data_;
  }

 private:
  T* data_ = nullptr;
  size_t capacity_ = 0;
};

// One host thread's L0A/L0B/L0C. The packed A of a tile row is kept and reused by
// the next tile of the same row (static scheduling hands a thread consecutive
// tiles), the way L1 would keep it on the device.
struct CubeScratch {
  Scratch<float> a;
  Scratch<half_bits> b;
  Scratch<float> c;
  uint64_t a_generation = ~uint64_t{0};
  const void* a_base = nullptr;
  int64_t a_m0 = -1;
};

thread_local CubeScratch t_scratch;

const void* Offset(const void* base, ElemType t, int64_t elems) {
  const size_t size = t == ElemType::kFloat16 ? sizeof(half_bits) : sizeof(float);
  return static_cast<const char*>(base) + elems * static_cast<int64_t>(size);
}

// Prefetches the source of one B block (op(B) rows [k0, k0 + kc), columns
// [n0, n0 + nt)) spread evenly over `steps` calls of Step().
class BlockPrefetcher {
 public:
  BlockPrefetcher() = default;
  BlockPrefetcher(const OperandView& b, int64_t n0, int64_t nt, int64_t k0, int64_t kc, int64_t steps) {
    const int64_t esize = b.type == ElemType::kFloat16 ? 2 : 4;
    // Memory rows of the block: k rows of n elements, or n rows of k when transposed.
    const int64_t first = b.trans ? n0 : k0, count = b.trans ? nt : kc;
    const int64_t offset = b.trans ? k0 : n0;
    base_ = static_cast<const char*>(b.base) + (first * b.ld + offset) * esize;
    row_bytes_ = (b.trans ? kc : nt) * esize;
    stride_ = b.ld * esize;
    rows_ = count;
    per_step_ = (count + steps - 1) / std::max<int64_t>(steps, 1);
  }
  void Step() {
    for (int64_t i = 0; i < per_step_ && next_ < rows_; ++i, ++next_) {
      const char* row = base_ + next_ * stride_;
      for (int64_t off = 0; off < row_bytes_; off += 64) __builtin_prefetch(row + off, 0, 2);
    }
  }

 private:
  const char* base_ = nullptr;
  int64_t row_bytes_ = 0, stride_ = 0, rows_ = 0, per_step_ = 0, next_ = 0;
};

// B packed once per call for all tiles (see CubeGemm); data is null when tiles
// pack their own. It is packed lazily in items of kPanelsPerItem fractal columns:
// the first tile that needs an item packs it, others wait for that one item.
inline constexpr int64_t kPanelsPerItem = 8;
enum : int { kItemUnpacked = 0, kItemPacking = 1, kItemPacked = 2 };

struct PrepackedB {
  half_bits* data = nullptr;
  int64_t panel_stride = 0;     // halves between fractal columns
  int64_t batch_stride = 0;     // halves between batches (0: B broadcast)
  int64_t items_per_batch = 0;
  std::atomic<int>* state = nullptr;  // one per item, per distinct batch
};

struct TileJob {
  const GemmProblem* p;
  const CubeMicroKernelSet* kernels;
  uint64_t generation;
  PrepackedB b;
};

// Largest B that is packed once per call; beyond it (or with tiles not on fractal
// column boundaries) each tile packs its own B blocks.
constexpr int64_t kMaxPrepackedBBytes = int64_t{64} << 20;

// +32 halves: fractal columns 2^n bytes apart would alias in L1 when read side by side.
int64_t PanelStride(int64_t kc) { return kc * 16 + 32; }

// Makes sure the B columns [n0, n0 + nt) of `batch` are packed: packs the items
// nobody has claimed yet, waits for those another thread is packing. No barrier,
// so a thread never idles on B it does not read (or on a descheduled colleague).
void EnsureBPacked(const GemmProblem& p, const PrepackedB& pb, int64_t batch, int64_t n0, int64_t nt) {
  const int64_t bb = pb.batch_stride == 0 ? 0 : batch;
  constexpr int64_t kCols = kPanelsPerItem * 16;
  for (int64_t item = n0 / kCols; item <= (n0 + nt - 1) / kCols; ++item) {
    std::atomic<int>& state = pb.state[bb * pb.items_per_batch + item];
    if (state.load(std::memory_order_acquire) == kItemPacked) continue;
    int expected = kItemUnpacked;
    if (state.compare_exchange_strong(expected, kItemPacking, std::memory_order_acquire)) {
      const OperandView b{Offset(p.b, p.b_type, bb * p.b_batch_stride), p.b_type, p.ldb, p.trans_b};
      const int64_t c0 = item * kCols;
      PackCubeB(b, c0, std::min(kCols, p.n - c0), 0, p.k, pb.panel_stride,
                pb.data + bb * pb.batch_stride + item * kPanelsPerItem * pb.panel_stride);
      state.store(kItemPacked, std::memory_order_release);
    } else {
      while (state.load(std::memory_order_acquire) != kItemPacked) std::this_thread::yield();
    }
  }
}

// Computes C[m0:m0+mt, n0:n0+nt] of batch `batch`.
void RunTile(const TileJob& job, int64_t batch, int64_t m0, int64_t mt, int64_t n0, int64_t nt) {
  const GemmProblem& p = *job.p;
  const CubeMicroKernelSet& ks = *job.kernels;
  const int64_t k = p.k;
  CubeScratch& s = t_scratch;

  const OperandView a{Offset(p.a, p.a_type, batch * p.a_batch_stride), p.a_type, p.lda, p.trans_a};
  const OperandView b{Offset(p.b, p.b_type, batch * p.b_batch_stride), p.b_type, p.ldb, p.trans_b};

  float* apack = s.a.Get(mt * k + kCubePackASlack);
  if (s.a_generation != job.generation || s.a_base != a.base || s.a_m0 != m0) {
    PackCubeA(a, m0, mt, k, ks.mr, apack);
    s.a_generation = job.generation;
    s.a_base = a.base;
    s.a_m0 = m0;
  }
  // Without a prepacked B, B is packed one k block at a time just before use, so
  // the block (kKc x nt halves, 64 KiB for nt = 128) is still in L2 when the Cube
  // reads it.
  const bool prepacked = job.b.data != nullptr;
  if (prepacked) EnsureBPacked(p, job.b, batch, n0, nt);
  const int64_t panels = CeilDiv(nt, 16);
  const int64_t panel_stride = prepacked ? job.b.panel_stride : PanelStride(std::min(kKc, k));
  half_bits* bpack = prepacked ? nullptr : s.b.Get(panels * panel_stride);
  const half_bits* bbase = prepacked ? job.b.data + batch * job.b.batch_stride + n0 / 16 * panel_stride : bpack;

  // L0C: fp32 accumulators, padded to whole fractal columns.
  const int64_t ldc = panels * 16;
  float* l0c = s.c.Get(mt * ldc);
  if (k == 0) std::memset(l0c, 0, mt * ldc * sizeof(float));
  const size_t c_size = p.c_type == ElemType::kFloat16 ? sizeof(half_bits) : sizeof(float);
  char* c = static_cast<char*>(p.c) + (batch * p.c_batch_stride + m0 * p.ldc + n0) * static_cast<int64_t>(c_size);
  const int64_t calls_per_block = CeilDiv(panels, ks.np) * CeilDiv(mt, ks.mr);
  for (int64_t k0 = 0; k0 < k; k0 += kKc) {
    const int64_t kc = std::min(kKc, k - k0);
    BlockPrefetcher next_b;
    if (!prepacked) {
      PackCubeB(b, n0, nt, k0, kc, panel_stride, bpack);
      // While the Cube works on this block, pull the next B block (of this tile, or
      // the first of the tile to the right, which this thread most likely runs next)
      // towards L2, a few lines per micro-kernel call: its rows are far apart in
      // memory and the hardware prefetcher leaves the packing waiting on L3.
      if (k0 + kKc < k) {
        next_b = BlockPrefetcher(b, n0, nt, k0 + kKc, std::min(kKc, k - k0 - kKc), calls_per_block);
      } else if (n0 + nt < p.n) {
        next_b = BlockPrefetcher(b, n0 + nt, std::min(nt, p.n - n0 - nt), 0, std::min(kKc, k), calls_per_block);
      }
    }
    const half_bits* bblock = bbase + (prepacked ? k0 * 16 : 0);
    for (int64_t p0 = 0; p0 < panels; p0 += ks.np) {
      const int64_t np = std::min<int64_t>(ks.np, panels - p0);
      const half_bits* bp = bblock + p0 * panel_stride;
      float* acc = l0c + p0 * 16;
      const int64_t acc_ld = ldc;
      for (int64_t i0 = 0, rows = 0; i0 < mt; i0 += rows) {
        rows = CubeSliverRows(mt, ks.mr, i0);
        next_b.Step();
        // The next call's L0C block (one line per row and fractal column), so its
        // first FMAs do not wait on L2.
        const float* next_c = acc + (i0 + rows) * acc_ld;
        const int64_t next_rows = std::min<int64_t>(ks.mr, mt - i0 - rows);
        for (int64_t r = 0; r < next_rows; ++r) {
          for (int64_t q = 0; q < np; ++q) __builtin_prefetch(next_c + r * acc_ld + q * 16, 1, 3);
        }
        ks.fn[rows - 1][np - 1](kc, apack + i0 * k + k0 * rows, bp, panel_stride, acc + i0 * acc_ld, acc_ld,
                                /*accumulate=*/k0 > 0);
      }
    }
  }

  // L0C stays a separate, compact buffer even for plain fp32 output: accumulating in
  // C itself saved this copy (~2%) but cost 5-15% at 1024^3, because C's rows are
  // often 4 KiB apart and a micro-tile's rows then collide in one L1 set.
  const FixPipeConfig fix{p.bias, p.epilogue, p.c_type, p.saturate_fp16};
  for (int64_t i = 0; i < mt; ++i) FixPipeRow(l0c + i * ldc, n0, nt, fix, c + i * p.ldc * static_cast<int64_t>(c_size));
}


}  // namespace

void ForceCubeSimdPath(SimdPath path) { g_forced_path.store(path); }

SimdPath ActiveCubeSimdPath() { return ResolvePath(g_forced_path.load()); }

void CubeGemm(const GemmProblem& p, const CubeTileShape& tile, std::vector<CubeTileCounts>* tiles) {
  const int64_t tm = p.m > 0 ? CeilDiv(p.m, tile.m) : 0;
  const int64_t tn = p.n > 0 ? CeilDiv(p.n, tile.n) : 0;
  const int64_t total = p.batch * tm * tn;
  if (tiles) tiles->assign(total, CubeTileCounts{});
  TileJob job{&p, &KernelsFor(ActiveCubeSimdPath()), g_call_generation.fetch_add(1) + 1, PrepackedB{}};

  // B is packed once per call into whole-K fractal columns when it is not too big:
  // every tile of a column of tiles reads the same B, and packing it per tile cost
  // 5-10% of the GEMM (strided reads from L3). This is host blocking only; the
  // counts still charge each tile its own MTE1 traffic, as the device does. The
  // buffer belongs to the calling thread (one per device's executor) and is reused.
  const int64_t b_batches = p.b_batch_stride == 0 ? 1 : p.batch;
  const int64_t b_panels = CeilDiv(p.n, 16);
  const int64_t b_panel_stride = PanelStride(p.k);
  const int64_t b_halves = b_batches * b_panels * b_panel_stride;
  const bool prepack = total > 0 && p.k > 0 && tile.n % 16 == 0 && b_halves * 2 <= kMaxPrepackedBBytes;
  std::unique_ptr<std::atomic<int>[]> item_state;
  if (prepack) {
    static thread_local Scratch<half_bits> caller_bpack;
    const int64_t items_per_batch = CeilDiv(b_panels, kPanelsPerItem);
    item_state = std::make_unique<std::atomic<int>[]>(b_batches * items_per_batch);
    for (int64_t i = 0; i < b_batches * items_per_batch; ++i) item_state[i].store(kItemUnpacked, std::memory_order_relaxed);
    job.b = PrepackedB{caller_bpack.Get(b_halves), b_panel_stride, b_batches > 1 ? b_panels * b_panel_stride : 0,
                       items_per_batch, item_state.get()};
  }

  // Tiles are independent and each output element is computed whole by one thread,
  // so the thread count cannot change results. The server gives each device one
  // compute thread team and queues requests in front of it, so this region never
  // oversubscribes the host cores. Each thread takes a contiguous run of tiles
  // (static partition: a tile row stays on one thread, which reuses its packed A)
  // and starts each row at its own column offset, so that threads begin by packing
  // different B items instead of waiting for each other.
#pragma omp parallel
  {
    const int64_t threads = omp_get_num_threads(), id = omp_get_thread_num();
    const int64_t lo = total * id / threads, hi = total * (id + 1) / threads;
    const int64_t shift = tn * id / threads;
    for (int64_t row_lo = lo, row_hi = lo; row_lo < hi; row_lo = row_hi) {
      row_hi = std::min(hi, (row_lo / tn + 1) * tn);
      const int64_t first = row_lo % tn, len = row_hi - row_lo;
      const int64_t rotate = shift > first && shift < first + len ? shift - first : 0;
      for (int64_t j = 0; j < len; ++j) {
        const int64_t t = row_lo + (j + rotate) % len;
        if (p.cancel != nullptr && p.cancel->load(std::memory_order_relaxed)) break;  // caller gave up
        const int64_t batch = t / (tm * tn);
        const int64_t m0 = (t / tn % tm) * tile.m, n0 = (t % tn) * tile.n;
        const int64_t mt = std::min(tile.m, p.m - m0), nt = std::min(tile.n, p.n - n0);
        RunTile(job, batch, m0, mt, n0, nt);
        if (tiles) (*tiles)[t] = CountCubeTile(p, tile, batch, m0, mt, n0, nt);
      }
    }
  }
}

}  // namespace npu::kernels
