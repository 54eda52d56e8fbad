// What the convolutions on the Cube (Conv with group 1, ConvTranspose) share.
//
// Their device work, counted as the chip does it with its NC1HWC0 layout:
// channels padded to 16 per kernel tap, MTE2 loading each tile's weights and
// the input rows its output pixels read once, MTE1 expanding them into L0B
// (img2col), not the expanded column matrix from GM. It depends on shapes
// only, so it is derived once, at plan time.
#pragma once

#include <cstdint>

#include <vector>

#include "absl/status/status.h"
#include "kernels/cube_gemm.h"
#include "server/device/device_preset.h"
#include "server/device/tile_work.h"
#include "server/graph/cube_tiling.h"
#include "server/graph/op_registry.h"

namespace npu::graph::ops {

struct ConvWorkShape {
  int64_t cg = 0, h = 0, w = 0;  // input channels of one group, input plane
  int64_t mg = 0;                // output channels of one group
  int64_t kh = 1, kw = 1;
  int64_t sh = 1, dh = 1, pt = 0;  // vertical stride, dilation, top padding
  int64_t oh = 0, ow = 0;
  // ConvTranspose: output row oy reads input row iy where iy * sh = oy + pt - ky * dh
  // (the Cube runs the convolution of the input with sh - 1 zeros between rows).
  bool transposed = false;
  // The depth axis of a 3-D convolution (NDC1HWC0): input depth, kernel, stride, dilation, front pad, output depth.
  int64_t d = 1, kd = 1, sd = 1, dd = 1, pf = 0, od = 1;
  int64_t pixels() const { return od * oh * ow; }
  // K fractals of one output fractal: ceil(cg / 16) channel blocks per tap.
  int64_t k_fractals() const { return (cg + 15) / 16 * kd * kh * kw; }
};

// Appends the tiles of `images` x `groups` GEMMs (pixels x mg x taps), each K
// slice of `plan.split_k`, in the order the kernel runs them.
void AppendConvWork(const ConvWorkShape& g, int64_t images, int64_t groups, const CubePlan& plan, size_t x_elem,
                    bool bias, const device::DevicePreset& preset, device::OpWork& work);

// Every input FLOAT16 or FLOAT32, of X's dtype.
absl::Status CheckConvDtypes(const InferContext& c);

// The GEMM of a convolution: `groups` batches of (images * pixels) x
// (channels / groups) x taps, A gathered by `a`, C written NCHW by FixPipe with
// the fp32 `bias` (or none) per output channel. The caller sets B.
struct ConvGemmShape {
  int64_t images = 0, pixels = 0, channels = 0, groups = 1, taps = 0;
};
kernels::GemmProblem ConvGemmProblem(const RunContext& ctx, const ConvGemmShape& s, const kernels::CubeASource& a,
                                     const float* bias);

// The bias a run adds: the prepared one, else the input's (converted into
// `scratch`), else null.
const float* ConvBias(const std::vector<float>& prepared, const HostTensor* input, int64_t channels,
                      std::vector<float>& scratch);

// MTE1 lays the img2col rows of one host tile out in fp32, a buffer per host
// thread: bounded like a tensor, so a graph cannot make a run allocate without
// limit (a convolution's columns are never stored whole). `taps` columns,
// `gemm_rows` rows in all.
absl::Status CheckColumnSliver(const InferContext& c, int64_t taps, int64_t gemm_rows);

}  // namespace npu::graph::ops
