// Grouped and depthwise Conv (group > 1) on the Vector unit: a direct stencil
// per output plane (kernels/stencil.h) instead of one narrow Cube GEMM per
// group. Numerics: operands at their storage type widened to fp32 (not
// rounded to fp16 as the Cube's are), the bias first, then one fused
// multiply-add per (input channel, ky, kx), the result rounded once.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "server/graph/op_registry.h"

namespace npu::graph::ops {

struct GroupedConvShape {
  int64_t n = 0, c = 0, h = 0, w = 0;  // input
  int64_t m = 0, kh = 0, kw = 0;       // weights [m, c / group, kh, kw]
  int64_t group = 1;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1, pt = 0, pl = 0;
  int64_t oh = 0, ow = 0;
};

// Runs ctx's Conv (inputs X, W, optional B) with the shape Conv validated.
absl::Status RunGroupedConv(RunContext& ctx, const GroupedConvShape& shape);

}  // namespace npu::graph::ops
