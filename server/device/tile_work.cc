#include "server/device/tile_work.h"

namespace npu::device {

TileWork& TileWork::operator+=(const TileWork& o) {
  cube_fractals += o.cube_fractals;
  vector_repeats += o.vector_repeats;
  vector_instructions += o.vector_instructions;
  scalar_instructions += o.scalar_instructions;
  mte1_a_bytes += o.mte1_a_bytes;
  mte1_b_bytes += o.mte1_b_bytes;
  mte2_bytes += o.mte2_bytes;
  mte3_bytes += o.mte3_bytes;
  fixpipe_bytes += o.fixpipe_bytes;
  l0c_to_ub_bytes += o.l0c_to_ub_bytes;
  pipeline_steps += o.pipeline_steps;
  overflow_elements += o.overflow_elements;
  shared_reads.insert(shared_reads.end(), o.shared_reads.begin(), o.shared_reads.end());
  return *this;
}

const char* TaskTypeName(TaskType t, bool separated) {
  switch (t) {
    case TaskType::kAiCore: return "AI_CORE";
    case TaskType::kAiVectorCore: return separated ? "AI_VECTOR_CORE" : "AI_CORE";
    case TaskType::kAiCpu: return "AI_CPU";
    case TaskType::kHccl: return "HCCL";
  }
  return "UNKNOWN";
}

}  // namespace npu::device
