// What one op's tiles read and write through the chip's L2 (l2_cache.h):
// every GM access of a tile is mapped to the device addresses of the op's
// tensors (OpWork::reads / writes) and played through the L2, wave by wave,
// the tiles of a wave in lock step (block_dim tiles that start together
// stream together):
//
//   shared reads  (a GEMM's A row panels, B column panels): slice s of a
//                 panel at pipeline step s, at the panel's place in its
//                 operand (SharedRead::operand), so tiles of a wave reading
//                 the same panel hit, and an operand an earlier op left in
//                 the L2 hits from the first read.
//   streamed reads (the rest of MTE2): the tile's share of each input no
//                 panel names, in up to kStreamSlices slices spread over its
//                 steps.
//   writes        (MTE3, FixPipe): the tile's share of each output,
//                 write-allocated; a tile with panels writes once, after its
//                 last step, a streaming tile slice by slice.
//
// A tile's share of a tensor is its position in the op's traffic of that
// kind scaled onto the tensor's bytes (a tile that reads 1/8 of the op's
// stream reads 1/8 of each input); hits are scaled back to the bytes the tile
// counted. An op whose tensors have no address (work built without a plan)
// streams and writes straight to HBM, and its panels live in an address space
// of their own (what model v3 did).
#pragma once

#include <cstdint>
#include <vector>

#include "server/device/l2_cache.h"
#include "server/device/tile_work.h"

namespace npu::device {

inline constexpr uint64_t kStreamSlices = 8;

struct TileL2Traffic {
  uint64_t hit_bytes = 0;     // reads the L2 served
  uint64_t l2_write_bytes = 0;  // writes allocated in the L2
  uint64_t hbm_bytes = 0;     // read misses, write-backs of evicted dirty data, unaddressed traffic
};

// The traffic of tiles [begin, end) of `work` (one wave), played through `l2`.
// `op_serial` names the op's private panel space when its tensors have no address.
class OpL2Traffic {
 public:
  OpL2Traffic(const OpWork& work, uint64_t op_serial);
  std::vector<TileL2Traffic> Wave(size_t begin, size_t end, L2Cache& l2) const;

 private:
  struct Panel {
    AddressRange operand;  // the tensor the panel is part of
    uint64_t offset = 0;   // the panel's first byte in the operand's panel traffic
    uint64_t total = 0;    // the operand's panel traffic: every distinct panel once
  };
  // Positions of each tile's streamed and written bytes in the op's traffic.
  struct TilePlace {
    uint64_t stream_at = 0, write_at = 0;
    std::vector<size_t> panels;  // index into panels_, per shared read
  };
  const OpWork& work_;
  std::vector<Panel> panels_;
  std::vector<TilePlace> places_;
  std::vector<AddressRange> streamed_;  // inputs no panel names (all inputs if every one is)
  uint64_t stream_total_ = 0, write_total_ = 0;
};

}  // namespace npu::device
