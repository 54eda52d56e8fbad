// Grouped and depthwise Conv (group > 1) on the Vector unit: a direct stencil
// per output plane (kernels/stencil.h) instead of one narrow Cube GEMM per
// group. Numerics: operands at their storage type widened to fp32 (not
// rounded to fp16 as the Cube's are), the bias first, then one fused
// multiply-add per (input channel, ky, kx), the result rounded once. A fused
// epilogue (fusion.h: the elementwise ops after the Conv) runs on each
// plane's fp32 results before that rounding, as FixPipe runs it for a Cube
// Conv, so the fused node gives the unfused graph's bits.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "server/graph/op_registry.h"
#include "server/graph/ops/cube_problem.h"

namespace npu::graph::ops {

struct GroupedConvShape {
  int64_t n = 0, c = 0, h = 0, w = 0;  // input
  int64_t m = 0, kh = 0, kw = 0;       // weights [m, c / group, kh, kw]
  int64_t group = 1;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1, pt = 0, pl = 0;
  int64_t oh = 0, ow = 0;
};

// What the plan prepared: the weights and bias as fp32 when they are constant
// (null: read from the inputs on each run), and the fused epilogue (or null).
struct GroupedConvPrepared {
  const std::vector<float>* weights = nullptr;
  const std::vector<float>* bias = nullptr;
  const CubeEpiloguePlan* epilogue = nullptr;
  const std::vector<TensorType>* epilogue_operand_types = nullptr;  // EpilogueOperandTypes, for its work
};

// The bias as the stencil starts from it: -0 made +0, so a sum is never -0 and
// skipped zero taps change nothing.
std::vector<float> GroupedConvBias(const HostTensor* bias, int64_t channels);

// Runs ctx's Conv (inputs X, W, optional B) with the shape Conv validated.
absl::Status RunGroupedConv(RunContext& ctx, const GroupedConvShape& shape, const GroupedConvPrepared& prepared);

}  // namespace npu::graph::ops
