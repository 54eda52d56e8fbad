// Conv (ONNX, 2-D, NCHW): img2col + Cube GEMM, the way a Da Vinci core runs a
// convolution. Per image and group the host expands the input into the column
// matrix [Cg*kh*kw, OH*OW] in fp16 (the Cube's operand type: fp32 inputs are
// rounded here, once, as the GEMM's packing would), the Cube multiplies the
// weights [Mg, Cg*kh*kw] by it with fp32 accumulation, and the C tile is
// written straight into the NCHW output. A bias is added per output channel in
// fp32 before the single rounding.
//
// What is counted is what the chip does with its NC1HWC0 layout (ConvTileWork):
// channels padded to 16 per kernel tap, MTE2 loading each tile's weights and
// the input rows its output pixels read once, MTE1 expanding them into L0B
// (img2col), not the expanded column matrix from GM.
#include <algorithm>
#include <vector>

#include "kernels/cube_gemm.h"
#include "kernels/fp16.h"
#include "server/device/cube_drain.h"
#include "server/device/vector_passes.h"
#include "server/graph/cube_tiling.h"
#include "server/graph/element_access.h"
#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/cube_work.h"
#include "server/graph/ops/parallel_for.h"
#include "server/graph/shape_math.h"
#include "server/graph/vector_tiling.h"

namespace npu::graph::ops {
namespace {

using kernels::half_bits;

struct ConvGeometry {
  int64_t n = 0, c = 0, h = 0, w = 0;    // input
  int64_t m = 0, kh = 0, kw = 0;         // weights [m, c/group, kh, kw]
  int64_t group = 1;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1, pt = 0, pl = 0, pb = 0, pr = 0;
  int64_t oh = 0, ow = 0;
  int64_t cg() const { return c / group; }
  int64_t mg() const { return m / group; }
  int64_t kdim() const { return cg() * kh * kw; }
  int64_t pixels() const { return oh * ow; }
};

absl::StatusOr<ConvGeometry> Geometry(const v1::Node& node, const NodeAttributes& attrs, const Shape& x,
                                      const Shape& wt) {
  if (x.size() != 4 || wt.size() != 4) {
    return NodeError(node, "only 2-D convolution (4-D input and weights) is supported, got input ",
                     ShapeToString(x), " and weights ", ShapeToString(wt));
  }
  ConvGeometry g{x[0], x[1], x[2], x[3], wt[0], wt[2], wt[3]};
  auto group = attrs.Int("group", 1);
  auto s = attrs.Ints("strides", {1, 1});
  auto d = attrs.Ints("dilations", {1, 1});
  auto p = attrs.Ints("pads", {0, 0, 0, 0});
  auto k = attrs.Ints("kernel_shape", {wt[2], wt[3]});
  auto auto_pad = attrs.String("auto_pad", "NOTSET");
  for (const absl::Status& st : {group.status(), s.status(), d.status(), p.status(), k.status(), auto_pad.status()}) {
    if (!st.ok()) return st;
  }
  if (s->size() != 2 || d->size() != 2 || p->size() != 4 || k->size() != 2) {
    return NodeError(node, "attributes \"strides\", \"dilations\" and \"kernel_shape\" need 2 entries, \"pads\" 4; got ",
                     s->size(), ", ", d->size(), ", ", k->size(), " and ", p->size());
  }
  if ((*k)[0] != wt[2] || (*k)[1] != wt[3]) {
    return NodeError(node, "attribute \"kernel_shape\" does not match the weights ", ShapeToString(wt));
  }
  if (*auto_pad != "NOTSET" && *auto_pad != "VALID") {
    return NodeError(node, "attribute \"auto_pad\" = ", Quoted(*auto_pad), " is not supported (NOTSET, VALID)");
  }
  g.group = *group;
  g.sh = (*s)[0], g.sw = (*s)[1], g.dh = (*d)[0], g.dw = (*d)[1];
  if (*auto_pad == "NOTSET") g.pt = (*p)[0], g.pl = (*p)[1], g.pb = (*p)[2], g.pr = (*p)[3];
  if (g.group < 1 || g.c % g.group != 0 || g.m % g.group != 0) {
    return NodeError(node, "attribute \"group\" = ", g.group, " must divide input channels ", g.c,
                     " and output channels ", g.m);
  }
  if (wt[1] != g.cg()) {
    return NodeError(node, "weights ", ShapeToString(wt), " need ", g.cg(), " input channels per group (input ",
                     ShapeToString(x), ", group ", g.group, ")");
  }
  // As torch: only the batch may be empty (no channels or pixels leave nothing to convolve).
  if (g.c == 0 || g.h == 0 || g.w == 0 || g.m == 0) {
    return NodeError(node, "input ", ShapeToString(x), " and weights ", ShapeToString(wt),
                     ": only the batch dimension may be 0");
  }
  auto oh = CheckedWindowOutput({g.h, g.kh, g.sh, g.dh, g.pt, g.pb, false}, "height");
  if (!oh.ok()) return AtNode(node, oh.status());
  auto ow = CheckedWindowOutput({g.w, g.kw, g.sw, g.dw, g.pl, g.pr, false}, "width");
  if (!ow.ok()) return AtNode(node, ow.status());
  g.oh = *oh;
  g.ow = *ow;
  // With an empty batch the output has no elements, so nothing else bounds one plane.
  if (auto n = CheckedElements({g.oh, g.ow}, "the output plane"); !n.ok()) return AtNode(node, n.status());
  return g;
}

absl::StatusOr<std::vector<TensorType>> InferConv(InferContext& c) {
  if (auto s = c.attrs.CheckKnown({"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"}); !s.ok()) {
    return s;
  }
  const TensorType& x = *c.inputs[0];
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (c.inputs[i] == nullptr) continue;
    if (!IsFloat(c.inputs[i]->dtype) || c.inputs[i]->dtype != x.dtype) {
      return NodeError(c.node, InputLabel(c.node, static_cast<int>(i)), ": dtype ", DataTypeName(c.inputs[i]->dtype),
                       " must be FLOAT16 or FLOAT32 and match input X");
    }
  }
  auto g = Geometry(c.node, c.attrs, x.shape, c.inputs[1]->shape);
  if (!g.ok()) return g.status();
  if (c.inputs.size() > 2 && c.inputs[2] != nullptr && c.inputs[2]->elements() != g->m) {
    return NodeError(c.node, "bias ", InputLabel(c.node, 2), " ", ToString(*c.inputs[2]), " needs ", g->m,
                     " elements");
  }
  // img2col's columns for one image and group, [Cg*kh*kw, OH*OW] fp16, are a buffer of the run's own.
  auto col = CheckedMul(g->kdim(), g->pixels(), "the img2col columns");
  if (col.ok()) col = CheckedMul(*col, 2, "the img2col columns");
  if (!col.ok()) return AtNode(c.node, col.status());
  if (static_cast<uint64_t>(*col) > c.max_tensor_bytes) {
    return NodeError(c.node, "the img2col columns for one image (", g->kdim(), " x ", g->pixels(), " fp16) take ",
                     *col, " bytes; the tensor limit is ", c.max_tensor_bytes);
  }
  return std::vector<TensorType>{{x.dtype, {g->n, g->m, g->oh, g->ow}}};
}

// The img2col for one image and group: col[(ci, ky, kx), (oy, ox)] from the
// group's fp16 input planes; zeros where the window reaches into the padding.
void Img2Col(const half_bits* planes, const ConvGeometry& g, half_bits* col) {
  const int64_t rows = g.kdim(), pix = g.pixels();
  ParallelFor(rows, [&](int64_t r) {
    const int64_t ci = r / (g.kh * g.kw), ky = (r / g.kw) % g.kh, kx = r % g.kw;
    const half_bits* plane = planes + ci * g.h * g.w;
    half_bits* dst = col + r * pix;
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      const int64_t iy = oy * g.sh - g.pt + ky * g.dh;
      half_bits* d = dst + oy * g.ow;
      if (iy < 0 || iy >= g.h) {
        std::fill_n(d, g.ow, half_bits{0});
        continue;
      }
      const half_bits* src = plane + iy * g.w;
      const int64_t x0 = kx * g.dw - g.pl;
      if (g.sw == 1) {  // a contiguous run with zero margins: the common 3x3 stride-1 case
        const int64_t lo = std::clamp<int64_t>(-x0, 0, g.ow), hi = std::clamp<int64_t>(g.w - x0, lo, g.ow);
        std::fill_n(d, lo, half_bits{0});
        std::copy(src + x0 + lo, src + x0 + hi, d + lo);
        std::fill(d + hi, d + g.ow, half_bits{0});
      } else {
        for (int64_t ox = 0; ox < g.ow; ++ox) {
          const int64_t ix = ox * g.sw + x0;
          d[ox] = (ix >= 0 && ix < g.w) ? src[ix] : half_bits{0};
        }
      }
    }
  });
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// K fractals of one output fractal: C1 = ceil(Cg / 16) channel blocks per tap.
int64_t KFractals(const ConvGeometry& g) { return CeilDiv(g.cg(), 16) * g.kh * g.kw; }

// The counted work of K slice `slice` (of `plan.split_k`) of the C tile at
// (m0, n0) of image `img`, group `grp`.
device::TileWork ConvTileWork(const ConvGeometry& g, const CubePlan& plan, int64_t img, int64_t grp, int64_t m0,
                              int64_t n0, int64_t slice, size_t x_elem, size_t o_elem, bool bias,
                              const device::DevicePreset& preset) {
  const int64_t mt = std::min(plan.tile.m, g.mg() - m0), nt = std::min(plan.tile.n, g.pixels() - n0);
  const int64_t fm = CeilDiv(mt, 16), fn = CeilDiv(nt, 16);
  const int64_t split = std::max<int64_t>(1, plan.split_k), fk_all = KFractals(g);
  const int64_t per_slice = CeilDiv(fk_all, split);
  const int64_t fk = std::max<int64_t>(0, std::min(per_slice, fk_all - slice * per_slice));
  device::TileWork w;
  w.cube_fractals = static_cast<uint64_t>(fm * fn * fk);
  w.mte1_a_bytes = static_cast<uint64_t>(fm * fk * 512);
  w.mte1_b_bytes = static_cast<uint64_t>(fn * fk * 512);  // img2col into L0B
  // The input rows the tile's output pixels read, C padded to C1 x 16, this slice's share of the channels.
  const int64_t oy0 = n0 / g.ow, oy1 = (n0 + nt - 1) / g.ow;
  const int64_t iy0 = std::max<int64_t>(0, oy0 * g.sh - g.pt);
  const int64_t iy1 = std::min<int64_t>(g.h - 1, oy1 * g.sh - g.pt + (g.kh - 1) * g.dh);
  const int64_t rows = std::max<int64_t>(0, iy1 - iy0 + 1);
  const uint64_t input = static_cast<uint64_t>(rows * g.w * CeilDiv(g.cg(), 16) * 16) * x_elem /
                         static_cast<uint64_t>(split);
  const uint64_t weights = static_cast<uint64_t>(fm * 16 * fk * 16) * 2;  // FRACTAL_Z fp16
  w.mte2_bytes = input + weights;
  // Weights are shared by every image and every tile of the same rows; the
  // input rows by every tile of the same pixels.
  auto key = [](uint64_t operand, uint64_t owner, int64_t origin, int64_t s) {
    return (operand << 62) ^ (owner << 24) ^ (static_cast<uint64_t>(s) << 48) ^ static_cast<uint64_t>(origin);
  };
  w.shared_reads = {{key(1, static_cast<uint64_t>(grp), m0, slice), weights},
                    {key(2, (static_cast<uint64_t>(img) << 20) ^ static_cast<uint64_t>(grp), n0, slice), input}};
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

absl::Status RunConv(RunContext& ctx) {
  const HostTensor& x = *ctx.inputs[0];
  const HostTensor& wt = *ctx.inputs[1];
  const HostTensor* bias_t = ctx.inputs.size() > 2 ? ctx.inputs[2] : nullptr;
  const HostTensor& out = ctx.outputs[0];
  auto geo = Geometry(ctx.node, ctx.attrs, x.type().shape, wt.type().shape);
  if (!geo.ok()) return geo.status();
  const ConvGeometry& g = *geo;
  ctx.work.task_type = device::TaskType::kAiCore;
  if (g.n == 0 || g.m == 0 || g.pixels() == 0) return absl::OkStatus();
  const CubePlan plan = PlanCubeTiles(g.n * g.group, g.mg(), g.pixels(), KFractals(g) * 16, ctx.preset);
  if (auto s = CheckCubeTileFits(plan.tile, ctx.preset); !s.ok()) return s;

  std::vector<float> bias;
  if (bias_t != nullptr) {
    bias.resize(static_cast<size_t>(g.m));
    LoadAsFloat(*bias_t, 0, 1, g.m, bias.data());
  }
  const int64_t plane_elems = g.cg() * g.h * g.w;
  std::vector<half_bits> planes16(x.type().dtype == v1::FLOAT32 ? static_cast<size_t>(plane_elems) : 0);
  std::vector<half_bits> col(static_cast<size_t>(g.kdim() * g.pixels()));
  // With a bias the Cube writes fp32 and the bias is added per channel before
  // rounding; without one FixPipe writes the output type directly.
  const bool fp32_out = out.type().dtype == v1::FLOAT32;
  std::vector<float> acc(bias_t != nullptr && !fp32_out ? static_cast<size_t>(g.mg() * g.pixels()) : 0);
  const size_t x_elem = ElementSize(x.type().dtype), w_elem = ElementSize(wt.type().dtype);
  const size_t o_elem = ElementSize(out.type().dtype);
  std::vector<kernels::CubeTileCounts> counts;

  for (int64_t img = 0; img < g.n; ++img) {
    for (int64_t grp = 0; grp < g.group; ++grp) {
      const int64_t in_off = (img * g.c + grp * g.cg()) * g.h * g.w;
      const half_bits* planes = nullptr;
      if (x.type().dtype == v1::FLOAT16) {
        planes = x.as<half_bits>() + in_off;
      } else {
        kernels::FloatToHalfN(x.as<float>() + in_off, planes16.data(), static_cast<size_t>(plane_elems), false);
        planes = planes16.data();
      }
      Img2Col(planes, g, col.data());

      kernels::GemmProblem p;
      p.m = g.mg(), p.n = g.pixels(), p.k = g.kdim();
      p.a = wt.data() + grp * g.mg() * g.kdim() * w_elem;
      p.a_type = CubeType(wt.type().dtype);
      p.lda = g.kdim();
      p.b = col.data();
      p.b_type = kernels::ElemType::kFloat16;
      p.ldb = g.pixels();
      p.ldc = g.pixels();
      p.saturate_fp16 = ctx.preset.fp16_saturation;
      std::byte* dst = out.mutable_data() + (img * g.m + grp * g.mg()) * g.pixels() * o_elem;
      const bool via_acc = !acc.empty();
      p.c = via_acc ? static_cast<void*>(acc.data()) : static_cast<void*>(dst);
      p.c_type = via_acc ? kernels::ElemType::kFloat32 : CubeType(out.type().dtype);
      kernels::CubeGemm(p, plan.tile, &counts);

      if (bias_t != nullptr) {
        const int64_t pix = g.pixels();
        for (int64_t r = 0; r < g.mg(); ++r) {
          const float b = bias[grp * g.mg() + r];
          float* row = via_acc ? acc.data() + r * pix : reinterpret_cast<float*>(dst) + r * pix;
          for (int64_t i = 0; i < pix; ++i) row[i] += b;
          if (via_acc) {
            StoreFromFloat(out, (img * g.m + grp * g.mg() + r) * pix, pix, row, ctx.preset.fp16_saturation);
          }
        }
      }
      for (const kernels::CubeTileCounts& c : counts) {
        for (int64_t s = 0; s < plan.split_k; ++s) {
          ctx.work.tiles.push_back(ConvTileWork(g, plan, img, grp, c.m0, c.n0, s, x_elem, o_elem, bias_t != nullptr,
                                                ctx.preset));
        }
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterConvOp(OpRegistry& r) {
  OpDef d;
  d.name = "Conv";
  d.units = "Cube, MTE1 (img2col), MTE2, FixPipe";
  d.task_type = device::TaskType::kAiCore;
  d.dtypes = {v1::FLOAT16, v1::FLOAT32};
  d.min_inputs = 2;
  d.max_inputs = 3;
  d.infer = InferConv;
  d.run = RunConv;
  r.Register(std::move(d));
}

}  // namespace npu::graph::ops
