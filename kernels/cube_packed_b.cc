#include "kernels/cube_packed_b.h"

#include <algorithm>
#include <new>
#include <thread>

namespace npu::kernels {

PackedCubeB PackedCubeB::Pack(const OperandView& b, int64_t k, int64_t n, int64_t batches, int64_t batch_stride,
                              bool saturate) {
  PackedCubeB packed;
  packed.saturate_ = saturate;
  packed.k_ = k;
  packed.n_ = n;
  packed.batches_ = batches;
  if (saturate) packed.saturated_ = CountSaturatedOperands(b, k, n, batches, batch_stride);
  const size_t bytes = std::max<size_t>((packed.bytes() + 63) / 64 * 64, 64);
  packed.data_.reset(static_cast<half_bits*>(std::aligned_alloc(64, bytes)));
  if (packed.data_ == nullptr) throw std::bad_alloc();
  const size_t esize = b.type == ElemType::kFloat16 ? sizeof(half_bits) : sizeof(float);
  for (int64_t bt = 0; bt < batches; ++bt) {
    OperandView batch_b = b;
    batch_b.base = static_cast<const char*>(b.base) + bt * batch_stride * static_cast<int64_t>(esize);
    half_bits* out = packed.data_.get() + bt * packed.batch_stride();
    if (n > 0) PackCubeB(batch_b, 0, n, 0, k, packed.panel_stride(), saturate, out);
    // The padding between fractal columns is never read; zero it so the bytes are defined.
    for (int64_t p = 0; p < packed.panels(); ++p) {
      std::fill_n(out + p * packed.panel_stride() + k * 16, packed.panel_stride() - k * 16, half_bits{0});
    }
  }
  return packed;
}

SharedBPanels ViewOf(const PackedCubeB& b) {
  SharedBPanels v;
  v.data = b.data();
  v.panel_stride = b.panel_stride();
  v.batch_stride = b.batches() == 1 ? 0 : b.batch_stride();
  v.items_per_batch = (b.panels() + SharedBPanels::kPanelsPerItem - 1) / SharedBPanels::kPanelsPerItem;
  return v;
}

void EnsurePanelsPacked(const GemmProblem& p, const SharedBPanels& b, int64_t batch, int64_t n0, int64_t nt) {
  if (b.state == nullptr) return;
  const int64_t bb = b.batch_stride == 0 ? 0 : batch;
  constexpr int64_t kCols = SharedBPanels::kPanelsPerItem * 16;
  for (int64_t item = n0 / kCols; item <= (n0 + nt - 1) / kCols; ++item) {
    std::atomic<int>& state = b.state[bb * b.items_per_batch + item];
    if (state.load(std::memory_order_acquire) == SharedBPanels::kPacked) continue;
    int expected = SharedBPanels::kUnpacked;
    if (state.compare_exchange_strong(expected, SharedBPanels::kPacking, std::memory_order_acquire)) {
      const size_t esize = p.b_type == ElemType::kFloat16 ? sizeof(half_bits) : sizeof(float);
      const OperandView src{static_cast<const char*>(p.b) + bb * p.b_batch_stride * static_cast<int64_t>(esize),
                            p.b_type, p.ldb, p.trans_b};
      const int64_t c0 = item * kCols;
      // The buffer is the call's own (SharedBPanels::data is const for the tiles that read it).
      half_bits* out = const_cast<half_bits*>(b.data) + bb * b.batch_stride + item * SharedBPanels::kPanelsPerItem * b.panel_stride;
      PackCubeB(src, c0, std::min(kCols, p.n - c0), 0, p.k, b.panel_stride, p.saturate_fp16, out);
      state.store(SharedBPanels::kPacked, std::memory_order_release);
    } else {
      while (state.load(std::memory_order_acquire) != SharedBPanels::kPacked) std::this_thread::yield();
    }
  }
}

}  // namespace npu::kernels
