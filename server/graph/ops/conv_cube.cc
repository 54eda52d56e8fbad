#include "server/graph/ops/conv_cube.h"

#include <algorithm>

#include "server/device/cube_drain.h"
#include "server/device/vector_passes.h"
#include "server/graph/element_access.h"
#include "server/graph/node_error.h"
#include "server/graph/ops/cube_problem.h"
#include "server/graph/shape_math.h"
#include "server/graph/vector_tiling.h"

namespace npu::graph::ops {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// floor(a / b) for b > 0 and any sign of a; wide inside, as a transposed
// convolution's stride may be near INT64_MAX when its input extent is 1.
int64_t FloorDiv(int64_t a, int64_t b) {
  const __int128 wa = a, wb = b;
  return static_cast<int64_t>(a >= 0 ? wa / wb : -((-wa + wb - 1) / wb));
}

// The input rows output rows [oy0, oy1] read.
int64_t InputRowsRead(const ConvWorkShape& g, int64_t oy0, int64_t oy1) {
  int64_t iy0, iy1;
  if (g.transposed) {
    iy0 = std::max<int64_t>(0, -FloorDiv(-(oy0 + g.pt - (g.kh - 1) * g.dh), g.sh));
    iy1 = std::min<int64_t>(g.h - 1, FloorDiv(oy1 + g.pt, g.sh));
  } else {
    iy0 = std::max<int64_t>(0, oy0 * g.sh - g.pt);
    iy1 = std::min<int64_t>(g.h - 1, oy1 * g.sh - g.pt + (g.kh - 1) * g.dh);
  }
  return std::max<int64_t>(0, iy1 - iy0 + 1);
}

// The input rows (of every input plane) output pixels [p0, p1] read: of a 3-D
// convolution, the planes their depth windows span times the rows of each.
int64_t InputRowsOfPixels(const ConvWorkShape& g, int64_t p0, int64_t p1) {
  const int64_t r0 = p0 / g.ow, r1 = p1 / g.ow;  // output rows, plane after plane
  if (g.od == 1 && g.d == 1) return InputRowsRead(g, r0, r1);
  const int64_t z0 = r0 / g.oh, z1 = r1 / g.oh;
  const __int128 spanned = static_cast<__int128>(z1 - z0) * g.sd + static_cast<__int128>(g.kd - 1) * g.dd + 1;
  const int64_t planes = static_cast<int64_t>(std::min<__int128>(g.d, spanned));
  return planes * (z0 == z1 ? InputRowsRead(g, r0 % g.oh, r1 % g.oh) : g.h);
}

// The counted work of K slice `slice` (of `plan.split_k`) of the C tile at
// (m0, n0) of image `img`, group `grp`.
device::TileWork ConvTileWork(const ConvWorkShape& g, const CubePlan& plan, int64_t img, int64_t grp, int64_t m0,
                              int64_t n0, int64_t slice, size_t x_elem, size_t o_elem, bool bias,
                              const device::DevicePreset& preset) {
  const int64_t mt = std::min(plan.tile.m, g.mg - m0), nt = std::min(plan.tile.n, g.pixels() - n0);
  const int64_t fm = CeilDiv(mt, 16), fn = CeilDiv(nt, 16);
  const int64_t split = std::max<int64_t>(1, plan.split_k), fk_all = g.k_fractals();
  const int64_t per_slice = CeilDiv(fk_all, split);
  const int64_t fk = std::max<int64_t>(0, std::min(per_slice, fk_all - slice * per_slice));
  device::TileWork w;
  w.cube_fractals = static_cast<uint64_t>(fm * fn * fk);
  w.mte1_a_bytes = static_cast<uint64_t>(fm * fk * 512);
  w.mte1_b_bytes = static_cast<uint64_t>(fn * fk * 512);  // img2col into L0B
  // The input rows the tile's output pixels read, C padded to C1 x 16, this slice's share of the channels.
  const int64_t rows = InputRowsOfPixels(g, n0, n0 + nt - 1);
  const uint64_t input = static_cast<uint64_t>(rows * g.w * CeilDiv(g.cg, 16) * 16) * x_elem /
                         static_cast<uint64_t>(split);
  const uint64_t weights = static_cast<uint64_t>(fm * 16 * fk * 16) * 2;  // FRACTAL_Z fp16
  w.mte2_bytes = input + weights;
  // Weights are shared by every image and every tile of the same rows; the
  // input rows by every tile of the same pixels.
  auto key = [](uint64_t operand, uint64_t owner, int64_t origin, int64_t s) {
    return (operand << 62) ^ (owner << 24) ^ (static_cast<uint64_t>(s) << 48) ^ static_cast<uint64_t>(origin);
  };
  // Operands as the L2 sees them: the weights are input 1, the feature map input 0.
  w.shared_reads = {{key(1, static_cast<uint64_t>(grp), m0, slice), weights, 1},
                    {key(2, (static_cast<uint64_t>(img) << 20) ^ static_cast<uint64_t>(grp), n0, slice), input, 0}};
  const uint64_t k_steps = static_cast<uint64_t>(CeilDiv(fk * 16, plan.tile.k));
  w.scalar_instructions = 8 * k_steps;
  w.pipeline_steps = std::max<uint64_t>(1, k_steps);
  const uint64_t acc = static_cast<uint64_t>(mt * nt) * 4;
  device::DrainCubeTile(acc, split == 1 ? static_cast<uint64_t>(mt * nt) * o_elem : acc, preset, w);
  // Coupled cores add the bias on the Vector unit (one fp32 pass); FixPipe adds it on the way out.
  if (bias && !preset.separated()) {
    w += VectorChunkWork(mt * nt, 0, 0, 4, device::VectorPasses(device::VectorKernel::kBiasAdd));
  }
  return w;
}

}  // namespace

void AppendConvWork(const ConvWorkShape& g, int64_t images, int64_t groups, const CubePlan& plan, size_t x_elem,
                    bool bias, const device::DevicePreset& preset, device::OpWork& work) {
  if (images == 0 || g.mg == 0 || g.pixels() == 0) return;
  for (int64_t img = 0; img < images; ++img) {
    for (int64_t grp = 0; grp < groups; ++grp) {
      for (int64_t m0 = 0; m0 < g.mg; m0 += plan.tile.m) {
        for (int64_t n0 = 0; n0 < g.pixels(); n0 += plan.tile.n) {
          for (int64_t s = 0; s < plan.split_k; ++s) {
            work.tiles.push_back(ConvTileWork(g, plan, img, grp, m0, n0, s, x_elem, x_elem, bias, preset));
          }
        }
      }
    }
  }
}

absl::Status CheckConvDtypes(const InferContext& c) {
  const DataType x = c.inputs[0]->dtype;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (c.inputs[i] == nullptr) continue;
    if (!IsFloat(c.inputs[i]->dtype) || c.inputs[i]->dtype != x) {
      return NodeError(c.node, InputLabel(c.node, static_cast<int>(i)), ": dtype ", DataTypeName(c.inputs[i]->dtype),
                       " must be FLOAT16 or FLOAT32 and match input X");
    }
  }
  return absl::OkStatus();
}

kernels::GemmProblem ConvGemmProblem(const RunContext& ctx, const ConvGemmShape& s, const kernels::CubeASource& a,
                                     const float* bias) {
  const DataType x = ctx.inputs[0]->type().dtype;
  kernels::GemmProblem p = CubeProblem(ctx, x, x, ctx.outputs[0].type().dtype);
  const int64_t per_group = s.channels / s.groups;
  p.batch = s.groups;
  p.m = s.images * s.pixels;
  p.n = per_group;
  p.k = s.taps;
  p.a_source = &a;
  p.bias = bias;
  p.bias_batch_stride = per_group;
  p.c = ctx.outputs[0].mutable_data();
  p.c_layout = kernels::CubeOutputLayout::kChannelMajor;
  p.c_image_rows = s.pixels;
  p.c_image_stride = s.channels * s.pixels;
  p.c_batch_stride = per_group * s.pixels;
  return p;
}

const float* ConvBias(const std::vector<float>& prepared, const HostTensor* input, int64_t channels,
                      std::vector<float>& scratch) {
  if (!prepared.empty()) return prepared.data();
  if (input == nullptr) return nullptr;
  scratch.resize(static_cast<size_t>(channels));
  LoadAsFloat(*input, 0, 1, channels, scratch.data());
  return scratch.data();
}

absl::Status CheckColumnSliver(const InferContext& c, int64_t taps, int64_t gemm_rows) {
  const int64_t rows = std::min<int64_t>(kHostCubeTile.m, std::max<int64_t>(gemm_rows, 1));
  auto bytes = CheckedMul(taps, rows * 4, "the img2col rows of one tile");
  if (!bytes.ok()) return AtNode(c.node, bytes.status());
  if (static_cast<uint64_t>(*bytes) > c.max_tensor_bytes) {
    return NodeError(c.node, "the img2col rows of one tile (", rows, " x ", taps, " fp32) take ", *bytes,
                     " bytes; the tensor limit is ", c.max_tensor_bytes);
  }
  return absl::OkStatus();
}

}  // namespace npu::graph::ops
