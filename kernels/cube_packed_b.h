// B as the Cube's L0B reads it, packed for all of K at once and shared by every
// tile of a GEMM (BLIS's shared packed B): fractal column p holds output columns
// [16p, 16p + 16) for k = 0..K-1, k-major (16 halves per k), and the columns past
// n are zero. Two owners use the layout:
//   PackedCubeB     constant weights packed once at plan time (fp32 weights are
//                   converted to fp16 there), read by every run (GemmProblem::packed_b)
//   SharedBPanels   a GEMM's own B packed during the call, a group of columns at
//                   a time by the first tile that needs it
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>

#include "kernels/cube_gemm.h"
#include "kernels/cube_pack.h"

namespace npu::kernels {

// Halves between fractal columns: k * 16, plus 32 so that columns 2^n bytes apart
// do not alias in L1 when the micro-kernel reads two side by side.
inline constexpr int64_t CubePanelStride(int64_t k) { return k * 16 + 32; }

class PackedCubeB {
 public:
  // op(B) of `batches` batches, `batch_stride` elements apart in b.base, each
  // k x n, fp32 rounded to fp16 in the float mode `saturate` (the mode of the
  // GEMMs that read it: GemmProblem::saturate_fp16). Throws std::bad_alloc when
  // the buffer cannot be had.
  static PackedCubeB Pack(const OperandView& b, int64_t k, int64_t n, int64_t batches, int64_t batch_stride,
                          bool saturate);

  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  int64_t batches() const { return batches_; }
  bool saturate() const { return saturate_; }  // the float mode it was rounded in
  // In saturation mode, the values its rounding saturated (CountSaturatedOperands).
  uint64_t saturated_operands() const { return saturated_; }
  int64_t panel_stride() const { return CubePanelStride(k_); }
  int64_t batch_stride() const { return panels() * panel_stride(); }  // halves
  int64_t panels() const { return (n_ + 15) / 16; }
  uint64_t bytes() const { return static_cast<uint64_t>(batches_ * batch_stride()) * sizeof(half_bits); }
  const half_bits* data() const { return data_.get(); }

 private:
  struct Free {
    void operator()(half_bits* p) const { std::free(p); }
  };
  int64_t k_ = 0, n_ = 0, batches_ = 0;
  bool saturate_ = false;
  uint64_t saturated_ = 0;
  std::unique_ptr<half_bits, Free> data_;
};

// The packed B one GEMM's tiles read. With `state` null every column is packed
// already (a PackedCubeB); otherwise items of kPanelsPerItem fractal columns are
// packed on first use (EnsurePanelsPacked).
struct SharedBPanels {
  static constexpr int64_t kPanelsPerItem = 8;
  enum : int { kUnpacked = 0, kPacking = 1, kPacked = 2 };
  const half_bits* data = nullptr;  // null: tiles pack their own B blocks
  int64_t panel_stride = 0;         // halves between fractal columns
  int64_t batch_stride = 0;         // halves between batches (0: one B for every batch)
  int64_t items_per_batch = 0;
  std::atomic<int>* state = nullptr;  // one per item, per distinct batch

  const half_bits* Panels(int64_t batch, int64_t n0) const {
    return data + batch * batch_stride + n0 / 16 * panel_stride;
  }
};

// The tiles' view of pre-packed B (one batch broadcasts over the GEMM's batch).
SharedBPanels ViewOf(const PackedCubeB& b);

// Makes sure B's columns [n0, n0 + nt) of `batch` are packed: packs the items
// nobody has claimed yet and waits for those another thread is packing. No
// barrier, so a thread never idles on B it does not read.
void EnsurePanelsPacked(const GemmProblem& p, const SharedBPanels& b, int64_t batch, int64_t n0, int64_t nt);

}  // namespace npu::kernels
