// ConvGrad(dY, X, W; Conv's attributes) -> dW [, dX]: the gradients of a 2-D
// or 3-D convolution, the way a Da Vinci core computes them, on the Cube:
//   dW_g = sum over images of dY_g [Mg, P] x col^T [P, K]  (col = img2col(X), as the forward)
//   dX   = col2im(W_g^T [K, Mg] x dY_g [Mg, P])
// with fp16 operands (fp32 ones are rounded on the way in, as the forward's)
// and fp32 accumulation; the per-image dW products are summed in fp32 on the
// Vector unit in image order, col2im scatter-adds in fp32 (MTE and Vector), and
// each result rounds once. The bias gradient is a ReduceSum of dY over
// (N, H, W). dX is left out when the node names one output (the first layer's
// input needs none).
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "kernels/cube_gemm.h"
#include "kernels/cube_operand_rounding.h"
#include "kernels/fp16.h"
#include "server/graph/cube_tiling.h"
#include "server/device/vector_passes.h"
#include "server/graph/element_access.h"
#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/conv_geometry.h"
#include "server/graph/ops/cube_problem.h"
#include "server/graph/ops/vector_chunks.h"
#include "server/graph/ops/parallel_for.h"
#include "server/graph/ops/pool_geometry.h"
#include "server/graph/ops/training_op_def.h"
#include "server/graph/shape_math.h"
#include "server/graph/vector_tiling.h"

namespace npu::graph::ops {
namespace {

using kernels::half_bits;

// What a run needs, prepared once at plan time: the geometry and the op's
// device work (it depends on shapes only).
struct ConvGradPlan {
  ConvGeometry g;
  bool want_dx = false;
  device::OpWork work;
};

// The counted work: per image and group the dW GEMM [Mg, K] over P and (with
// dX) the col_grad GEMM [K, P] over Mg, each image's img2col traffic on its
// GEMMs' tiles; the Vector passes (dW sums, col2im) and the stores spread over
// all tiles.
absl::StatusOr<device::OpWork> ConvGradWork(const InferContext& c, const ConvGeometry& g, bool want_dx,
                                            const TensorType& x, const TensorType& w) {
  const int64_t K = g.kdim(), P = g.pixels(), Mg = g.mg();
  // One image's columns [K, P]: with an empty batch no GEMM bounds them (the
  // tiler counts no tiles), yet dW is still written and sized from them.
  if (auto cols = CheckedElements({K, P}, "one image's columns (kernel taps x output pixels)"); !cols.ok()) {
    return AtNode(c.node, cols.status());
  }
  auto dw_plan = PlanCubeModel(c, g.n * g.group, Mg, K, P);
  if (!dw_plan.ok()) return dw_plan.status();
  auto dx_plan = PlanCubeModel(c, g.n * g.group, K, P, Mg);
  if (!dx_plan.ok()) return dx_plan.status();
  device::OpWork work;
  work.task_type = device::TaskType::kAiCore;
  const int64_t plane_elems = g.cg() * g.volume();
  const uint64_t col_bytes = static_cast<uint64_t>(K * P) * sizeof(half_bits);
  const uint64_t plane_bytes = static_cast<uint64_t>(plane_elems) * ElementSize(x.dtype);
  uint64_t key = 0;  // L2 keys of this op's GEMMs
  device::TileWork vector_work;
  for (int64_t img = 0; img < g.n; ++img) {
    for (int64_t grp = 0; grp < g.group; ++grp) {
      const size_t first = work.tiles.size();
      AppendModelGemm(Mg, K, P, kernels::ElemType::kFloat32, *dw_plan, key, key + 1, *c.preset, work);
      key += 2;
      vector_work += VectorChunkWork(Mg * K, 0, 0, 4, device::VectorPasses(device::VectorKernel::kAccumulate));
      if (want_dx) {
        AppendModelGemm(K, P, Mg, kernels::ElemType::kFloat32, *dx_plan, key, key + 1, *c.preset, work);
        key += 2;
        vector_work += VectorChunkWork(K * P, 0, 0, 4, device::VectorPasses(device::VectorKernel::kAccumulate));
        vector_work.mte3_bytes += plane_bytes;
      }
      const uint64_t share = std::max<uint64_t>(1, work.tiles.size() - first);
      for (size_t t = first; t < work.tiles.size(); ++t) {
        work.tiles[t].mte1_b_bytes += col_bytes / share;
        work.tiles[t].mte2_bytes += plane_bytes / share;
      }
    }
  }
  vector_work.mte3_bytes += static_cast<uint64_t>(g.m * K) * ElementSize(w.dtype);
  if (work.tiles.empty()) work.tiles.emplace_back();
  const uint64_t tiles = work.tiles.size();
  for (device::TileWork& t : work.tiles) {
    t.vector_repeats += vector_work.vector_repeats / tiles;
    t.vector_instructions += vector_work.vector_instructions / tiles;
    t.mte3_bytes += vector_work.mte3_bytes / tiles;
  }
  return work;
}

absl::StatusOr<std::vector<TensorType>> InferConvGrad(InferContext& c) {
  if (auto s = CheckFloatInputs(c); !s.ok()) return s;
  const TensorType& dy = *c.inputs[0];
  const TensorType& x = *c.inputs[1];
  const TensorType& w = *c.inputs[2];
  auto g = ConvGeometryOf(c.node, c.attrs, x.shape, w.shape);
  if (!g.ok()) return g.status();
  const Shape y = g->OutputShape();
  if (dy.shape != y) {
    return NodeError(c.node, "the gradient ", ToString(dy), " does not match the convolution's output ",
                     ShapeToString(y));
  }
  ConvGradPlan plan;
  plan.g = *g;
  plan.want_dx = c.node.outputs_size() > 1 && !c.node.outputs(1).empty();
  auto work = ConvGradWork(c, *g, plan.want_dx, x, w);
  if (!work.ok()) return work.status();
  plan.work = *std::move(work);
  c.Prepare(std::move(plan));
  return std::vector<TensorType>{w, x};
}

// The outputs ox of a row whose tap reads input column ox * stride + offset,
// those inside [0, extent): TapsInside with the outputs as the taps.
struct OutputSpan {
  int64_t begin = 0, end = 0, first = 0;  // `first`: the input column output `begin` reads
};
OutputSpan InsideSpan(int64_t outputs, int64_t stride, int64_t offset, int64_t extent) {
  const TapRange r = TapsInside(offset, outputs, stride, extent);
  return {r.begin, r.end, offset + r.begin * stride};
}

// The input plane (offset within a channel's volume) that depth tap kz of
// output plane oz reads, or -1 in the depth padding.
int64_t PlaneOf(const ConvGeometry& g, int64_t oz, int64_t kz) {
  const int64_t iz = oz * g.sd - g.pf + kz * g.dd;
  return iz >= 0 && iz < g.d ? iz * g.h * g.w : -1;
}

// The column matrix of one image and group, col[(ci, kz, ky, kx), (oz, oy,
// ox)] (rows `ld` apart), from its fp16 input volumes [Cg, D, H, W], 0 in the
// padding: the B operand of dW's GEMM (the forward lays the same taps out per
// tile, kernels/cube_im2col.h; the gradient needs them transposed, whole).
void Columns(const half_bits* planes, const ConvGeometry& g, half_bits* col, int64_t ld) {
  const int64_t rows = g.kdim(), pix = g.pixels(), opl = g.oh * g.ow;
  ParallelFor(rows, 2 * rows * pix, [&](int64_t r) {  // each column element read and written once
    const int64_t ci = r / (g.kd * g.kh * g.kw), kz = r / (g.kh * g.kw) % g.kd, ky = (r / g.kw) % g.kh, kx = r % g.kw;
    const half_bits* volume = planes + ci * g.volume();
    half_bits* dst = col + r * ld;
    const OutputSpan xs = InsideSpan(g.ow, g.sw, kx * g.dw - g.pl, g.w);
    for (int64_t oz = 0; oz < g.od; ++oz) {
      const int64_t depth = PlaneOf(g, oz, kz);
      for (int64_t oy = 0; oy < g.oh; ++oy) {
        half_bits* out = dst + oz * opl + oy * g.ow;
        const int64_t iy = oy * g.sh - g.pt + ky * g.dh;
        if (depth < 0 || iy < 0 || iy >= g.h || xs.begin >= xs.end) {
          std::fill_n(out, g.ow, half_bits{0});
          continue;
        }
        std::fill_n(out, xs.begin, half_bits{0});
        const half_bits* src = volume + depth + iy * g.w + xs.first;
        if (g.sw == 1) {
          std::copy_n(src, xs.end - xs.begin, out + xs.begin);
        } else {
          for (int64_t ox = xs.begin; ox < xs.end; ++ox) out[ox] = src[(ox - xs.begin) * g.sw];
        }
        std::fill(out + xs.end, out + g.ow, half_bits{0});
      }
    }
  });
}

// Adds col_grad [(ci, kz, ky, kx), (oz, oy, ox)] (rows `ld` apart) into the
// group's dX volumes [Cg, D, H, W] (fp32), in a fixed order: each input
// channel is one thread's.
void Col2Im(const float* col, int64_t ld, const ConvGeometry& g, float* planes) {
  const int64_t pix = g.pixels(), opl = g.oh * g.ow;
  ParallelFor(g.cg(), g.kdim() * pix + g.cg() * g.volume(), [&](int64_t ci) {
    float* volume = planes + ci * g.volume();
    for (int64_t kz = 0; kz < g.kd; ++kz) {
      for (int64_t ky = 0; ky < g.kh; ++ky) {
        for (int64_t kx = 0; kx < g.kw; ++kx) {
          const float* src = col + (((ci * g.kd + kz) * g.kh + ky) * g.kw + kx) * ld;
          const OutputSpan xs = InsideSpan(g.ow, g.sw, kx * g.dw - g.pl, g.w);
          if (xs.begin >= xs.end) continue;
          for (int64_t oz = 0; oz < g.od; ++oz) {
            const int64_t depth = PlaneOf(g, oz, kz);
            if (depth < 0) continue;
            for (int64_t oy = 0; oy < g.oh; ++oy) {
              const int64_t iy = oy * g.sh - g.pt + ky * g.dh;
              if (iy < 0 || iy >= g.h) continue;
              float* dst = volume + depth + iy * g.w + xs.first;
              const float* in = src + oz * opl + oy * g.ow + xs.begin;
              const int64_t n = xs.end - xs.begin;
              if (g.sw == 1) {
                for (int64_t i = 0; i < n; ++i) dst[i] += in[i];
              } else {
                for (int64_t i = 0; i < n; ++i) dst[i * g.sw] += in[i];
              }
            }
          }
        }
      }
    }
  });
}

// Images one GEMM pair covers: enough for 4096 pixels (a GEMM depth that
// fills the Cube's tiles), within a 64 MiB budget for their columns (fp16),
// column gradients (fp32) and gathered dY; at least one.
int64_t ImagesPerChunk(const ConvGeometry& g, size_t dy_elem, bool want_dx) {
  const int64_t pixels = std::max<int64_t>(g.pixels(), 1);
  const int64_t per_image =
      pixels * (g.kdim() * static_cast<int64_t>(sizeof(half_bits) + (want_dx ? sizeof(float) : 0)) +
                g.mg() * static_cast<int64_t>(dy_elem));
  const int64_t wanted = (4096 + pixels - 1) / pixels, fits = (int64_t{64} << 20) / per_image;
  return std::clamp<int64_t>(std::min(wanted, fits), 1, std::max<int64_t>(g.n, 1));
}

// Per group, images in chunks: the chunk's columns side by side [K, c * P]
// and its dY gathered [Mg, c * P], so that dW and the column gradient are one
// GEMM each over all the chunk's pixels (per image they were too small to
// fill the Cube's tiles).
absl::Status RunConvGrad(RunContext& ctx) {
  const ConvGradPlan& plan = ctx.State<ConvGradPlan>();
  const ConvGeometry& g = plan.g;
  const HostTensor& dy = *ctx.inputs[0];
  const HostTensor& x = *ctx.inputs[1];
  const HostTensor& wt = *ctx.inputs[2];
  const bool want_dx = plan.want_dx && ctx.outputs.size() > 1;
  const int64_t K = g.kdim(), P = g.pixels(), Mg = g.mg();
  const int64_t plane_elems = g.cg() * g.volume();
  const size_t dy_elem = ElementSize(dy.type().dtype), w_elem = ElementSize(wt.type().dtype);
  const int64_t chunk = ImagesPerChunk(g, dy_elem, want_dx);
  std::vector<half_bits> planes16(static_cast<size_t>(plane_elems)), cols(static_cast<size_t>(K * chunk * P));
  std::vector<std::byte> dyt(static_cast<size_t>(Mg * chunk * P) * dy_elem);
  // dW in fp32: each group's first chunk writes its rows, later chunks add a
  // partial (allocated only when there are later chunks; dW of a wide layer
  // is megabytes, and a fresh zeroed buffer per call cost page faults).
  std::unique_ptr<float[]> dw_acc(new float[static_cast<size_t>(g.m * K)]);
  std::vector<float> dw_part(chunk < g.n ? static_cast<size_t>(Mg * K) : 0);
  if (g.n == 0) std::fill_n(dw_acc.get(), g.m * K, 0.0f);  // no images: no chunk writes it
  std::vector<float> col_grad(want_dx ? static_cast<size_t>(K * chunk * P) : 0);
  std::vector<float> dx_planes(want_dx ? static_cast<size_t>(plane_elems) : 0);
  const bool saturate = ctx.preset.fp16_saturation;
  // The GEMMs write fp32 partials (whose overflow the final stores count); in
  // saturation mode the operands it hides count too, each value once.
  uint64_t overflow = 0;
  if (saturate) {
    for (const HostTensor* t : {&x, &dy, &wt}) {
      if (t->type().dtype == v1::FLOAT32) {
        overflow += kernels::CountHalfOverflow(t->as<float>(), static_cast<size_t>(t->type().elements()));
      }
    }
  }

  for (int64_t grp = 0; grp < g.group; ++grp) {
    for (int64_t i0 = 0; i0 < g.n; i0 += chunk) {
      if (ctx.cancel != nullptr && ctx.cancel->load(std::memory_order_relaxed)) return absl::OkStatus();
      const int64_t images = std::min(chunk, g.n - i0), ld = images * P;
      for (int64_t img = i0; img < i0 + images; ++img) {
        const int64_t in_off = (img * g.c + grp * g.cg()) * g.volume();
        if (x.type().dtype == v1::FLOAT16) {
          std::copy_n(x.as<half_bits>() + in_off, plane_elems, planes16.data());
        } else {
          kernels::CubeOperandHalves(x.as<float>() + in_off, planes16.data(), static_cast<size_t>(plane_elems),
                                     saturate);
        }
        Columns(planes16.data(), g, cols.data() + (img - i0) * P, ld);
        for (int64_t m = 0; m < Mg; ++m) {
          std::memcpy(dyt.data() + (m * ld + (img - i0) * P) * dy_elem,
                      dy.data() + ((img * g.m + grp * Mg + m) * P) * dy_elem, static_cast<size_t>(P) * dy_elem);
        }
      }
      // dW_g += dY_g x col^T over the chunk's pixels, into fp32.
      kernels::GemmProblem pw = CubeProblem(ctx, dy.type().dtype, v1::FLOAT16, v1::FLOAT32);
      pw.m = Mg, pw.n = K, pw.k = ld;
      pw.a = dyt.data(), pw.lda = ld;
      pw.b = cols.data(), pw.ldb = ld, pw.trans_b = true;
      float* acc = dw_acc.get() + grp * Mg * K;
      pw.c = i0 == 0 ? acc : dw_part.data(), pw.ldc = K;
      RunCubeGemm(pw);
      if (i0 > 0) {
        ParallelFor(Mg, 2 * Mg * K, [&](int64_t r) {
          for (int64_t i = r * K; i < (r + 1) * K; ++i) acc[i] += dw_part[i];
        });
      }

      if (want_dx) {
        // col_grad = W_g^T x dY_g; W_g is [Mg, K] row-major.
        kernels::GemmProblem px = CubeProblem(ctx, wt.type().dtype, dy.type().dtype, v1::FLOAT32);
        px.m = K, px.n = ld, px.k = Mg;
        px.a = wt.data() + grp * Mg * K * w_elem, px.lda = K, px.trans_a = true;
        px.b = dyt.data(), px.ldb = ld;
        px.c = col_grad.data(), px.ldc = ld;
        RunCubeGemm(px);
        for (int64_t img = i0; img < i0 + images; ++img) {
          std::fill(dx_planes.begin(), dx_planes.end(), 0.0f);
          Col2Im(col_grad.data() + (img - i0) * P, ld, g, dx_planes.data());
          overflow += StoreFromFloat(ctx.outputs[1], (img * g.c + grp * g.cg()) * g.volume(), plane_elems,
                                     dx_planes.data(), saturate);
        }
      }
    }
  }
  overflow += StoreFromFloat(ctx.outputs[0], 0, g.m * K, dw_acc.get(), saturate);
  SetCubeWork(ctx, plan.work, overflow);
  return absl::OkStatus();
}

}  // namespace

void RegisterConvGradOp(OpRegistry& r) {
  r.Register(WithAttributes(TrainingOpDef("ConvGrad", 3, 3, 2, InferConvGrad, RunConvGrad,
                                          "Cube, MTE1 (img2col), MTE2, FixPipe, Vector (dW sums, col2im)",
                                          device::TaskType::kAiCore),
                            ConvAttributes()));
}

}  // namespace npu::graph::ops
