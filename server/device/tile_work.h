// What a kernel really did for one tile of one op, counted while it ran.
// The cost model turns these counts into unit cycles (cost_model.h).
#pragma once

#include <cstdint>
#include <vector>

#include "server/device/address_range.h"

namespace npu::device {

// GM data a tile reads that other tiles of the same op read too (a GEMM's A
// row panel, B column panel): the chip's L2 can serve the repeats (l2_cache.h).
// `key` names the data within the op; its bytes are part of mte2_bytes and are
// read in pipeline_steps equal slices, one per step. `operand` is the op input
// (OpWork::reads) the panel is part of; -1 when none is known.
struct SharedRead {
  uint64_t key = 0;
  uint64_t bytes = 0;
  int operand = -1;
};

struct TileWork {
  uint64_t cube_fractals = 0;        // 16x16x16 fp16 MAC steps issued to the Cube
  uint64_t vector_repeats = 0;       // 256-byte Vector repeats (transcendental passes included)
  uint64_t vector_instructions = 0;  // Vector instructions issued (each up to 255 repeats)
  uint64_t scalar_instructions = 0;  // loop/address work on the Scalar unit
  uint64_t mte1_a_bytes = 0;         // L1 -> L0A
  uint64_t mte1_b_bytes = 0;         // L1 -> L0B (img2col for a convolution)
  uint64_t mte2_bytes = 0;           // GM -> L1/UB
  uint64_t mte3_bytes = 0;           // UB -> GM
  uint64_t fixpipe_bytes = 0;        // L0C -> GM (separated cores)
  uint64_t l0c_to_ub_bytes = 0;      // L0C -> UB by the Vector unit (coupled cores)
  uint64_t pipeline_steps = 1;       // double-buffered iterations inside the tile (>= 1)
  std::vector<SharedRead> shared_reads;  // the part of mte2_bytes other tiles share (empty: streamed)
  // Results that overflowed their type: fp16 saturated to +-65504 (presets that
  // saturate) or an inf/NaN produced. What raises the float-status flag
  // (NPUGetFloatStatus) and msprof's overflow alarm.
  uint64_t overflow_elements = 0;

  uint64_t mte1_bytes() const { return mte1_a_bytes + mte1_b_bytes; }
  // GM bytes written (MTE3 and FixPipe).
  uint64_t gm_write_bytes() const { return mte3_bytes + fixpipe_bytes; }

  // Adds the counts (a tile made of chunks); shared reads are appended.
  TileWork& operator+=(const TileWork& o);
};

// Where a task runs, named as CANN msprof's "Task Type". On coupled chips
// (`separated` false) Vector work runs on the AI cores too, and msprof calls
// it AI_CORE. HCCL: a collective communication task, on the chip-to-chip
// links, not on the AI cores.
enum class TaskType { kAiCore, kAiVectorCore, kAiCpu, kHccl };
const char* TaskTypeName(TaskType t, bool separated = true);

// All tiles of one op: the unit of scheduling. block_dim = tiles.size().
struct OpWork {
  TaskType task_type = TaskType::kAiVectorCore;
  std::vector<TileWork> tiles;
  // A kHccl task: the cycles its collective ran (fixed by the group, which
  // every member's device waited for), what it moved, and the results its
  // reduction overflowed (the float status).
  struct Comm {
    uint64_t start = 0, end = 0;
    uint64_t bytes = 0;
    uint64_t overflow_elements = 0;
  } comm;
  // Device addresses of the op's input tensors (in the node's input order; an
  // omitted input has none) and of its outputs, for the L2 model
  // (l2_traffic.h). The executor fills them from the plan's storage; work
  // without them streams and writes straight to HBM.
  std::vector<AddressRange> reads, writes;
};

}  // namespace npu::device
