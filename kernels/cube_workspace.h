// The host's L0A/L0B/L0C: each thread of a GEMM's team gets its own packed-A,
// B-block and accumulator buffers. They are sized and allocated by the calling
// thread before the parallel region (so nothing inside it allocates or throws)
// and kept, grow-only, for the caller's next GEMM: first touch of fresh pages
// costs ~11 us per 4 KiB here (ANCHORS.md), more than a small GEMM.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <vector>

#include "kernels/fp16.h"

namespace npu::kernels {

// A grow-only, 64-byte aligned buffer. Reserve throws std::bad_alloc.
template <typename T>
class CubeBuffer {
 public:
  CubeBuffer() = default;
  CubeBuffer(const CubeBuffer&) = delete;
  CubeBuffer& operator=(const CubeBuffer&) = delete;
  ~CubeBuffer() { std::free(data_); }
  void Reserve(size_t n) {
    if (n <= capacity_ && data_ != nullptr) return;
    const size_t bytes = (std::max<size_t>(n, 1) * sizeof(T) + 63) / 64 * 64;
    T* fresh = static_cast<T*>(std::aligned_alloc(64, bytes));
    if (fresh == nullptr) throw std::bad_alloc();
    std::free(data_);
    data_ = fresh;
    capacity_ = bytes / sizeof(T);
  }
  T* data() const { return data_; }

 private:
  T* data_ = nullptr;
  size_t capacity_ = 0;
};

// One thread's buffers, and what its packed A holds (the A of a tile row is
// reused by the next tile of the same row, as L1 would keep it on the device).
struct CubeThreadBuffers {
  CubeBuffer<float> a;      // L0A: the tile's A slivers, fp32 values of fp16 roundings
  CubeBuffer<half_bits> b;  // L0B: one k block of B's fractal columns, when B is not shared
  CubeBuffer<float> c;      // L0C: the tile's fp32 accumulators
  uint64_t a_call = ~uint64_t{0};
  int64_t a_batch = -1, a_m0 = -1;
};

struct CubeWorkspace {
  std::vector<std::unique_ptr<CubeThreadBuffers>> threads;
  CubeBuffer<half_bits> shared_b;  // SharedBPanels of the calling thread's GEMMs

  // Makes `count` threads' buffers hold at least the given elements each.
  void Reserve(int count, size_t a_floats, size_t b_halves, size_t c_floats) {
    while (static_cast<int>(threads.size()) < count) threads.push_back(std::make_unique<CubeThreadBuffers>());
    for (int i = 0; i < count; ++i) {
      threads[i]->a.Reserve(a_floats);
      threads[i]->b.Reserve(b_halves);
      threads[i]->c.Reserve(c_floats);
    }
  }
};

// The calling thread's workspace (one per device executor thread, in the server).
CubeWorkspace& CallerCubeWorkspace();

}  // namespace npu::kernels
