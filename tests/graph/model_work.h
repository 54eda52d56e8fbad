// Op work for the model's tests, built by the same code the ops run (the
// Cube tiler and the kernel's per-tile counting), for shapes too large to
// compute in a test.
#pragma once

#include <cstdint>

#include "kernels/cube_tile_counts.h"
#include "server/device/device_preset.h"
#include "server/device/tile_work.h"
#include "server/graph/cube_tiling.h"

namespace npu::graph::testing {

inline device::DevicePreset Preset(const char* name) { return *device::PresetByName(name); }

// The work MatMul records for an fp16 m x k x n GEMM with fp16 output.
inline device::OpWork GemmWork(int64_t m, int64_t n, int64_t k, const device::DevicePreset& preset) {
  kernels::GemmProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.c_type = kernels::ElemType::kFloat16;
  const CubePlan plan = PlanCubeTiles(1, m, n, k, preset);
  device::OpWork work;
  work.task_type = device::TaskType::kAiCore;
  AppendCubeTiles(kernels::CountCubeTiles(p, plan.tile), m, n, k, plan, 0, 0, preset, work);
  return work;
}

}  // namespace npu::graph::testing
