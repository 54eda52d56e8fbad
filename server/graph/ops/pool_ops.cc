// MaxPool, AveragePool (2-D, NCHW; kernel_shape, strides, pads, dilations for
// MaxPool, ceil_mode, count_include_pad) and GlobalAveragePool (any spatial
// rank) on the Vector unit. A pooled plane is loaded into UB padded (and split
// by the horizontal stride), then each output row is built by one Vector pass
// per kernel tap (kernels/stencil.h).
#include <algorithm>
#include <limits>
#include <vector>

#include "kernels/stencil.h"
#include "kernels/vector_kernels.h"
#include "server/device/vector_passes.h"
#include "server/graph/element_access.h"
#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/pool_geometry.h"
#include "server/graph/ops/vector_chunks.h"
#include "server/graph/shape_math.h"
#include "server/graph/vector_tiling.h"

namespace npu::graph::ops {

absl::StatusOr<PoolGeometry> PoolGeometryOf(const v1::Node& node, const NodeAttributes& attrs, const Shape& x,
                                            bool max) {
  if (x.size() != 4) {
    return NodeError(node, InputLabel(node, 0), " must be 4-D (N, C, H, W), got rank ", x.size());
  }
  // torch pools only batches that are empty: a window over no channels or no pixels is undefined.
  if (x[1] == 0 || x[2] == 0 || x[3] == 0) {
    return NodeError(node, InputLabel(node, 0), " ", ShapeToString(x),
                     ": only the batch dimension may be 0 (channels and spatial dims need >= 1)");
  }
  auto k = attrs.Ints("kernel_shape", {});
  auto s = attrs.Ints("strides", {1, 1});
  auto d = attrs.Ints("dilations", {1, 1});
  auto p = attrs.Ints("pads", {0, 0, 0, 0});
  auto ceil = attrs.Int("ceil_mode", 0);
  auto pad = attrs.Int("count_include_pad", 0);
  auto auto_pad = attrs.String("auto_pad", "NOTSET");
  auto order = attrs.Int("storage_order", 0);
  for (const absl::Status& st : {k.status(), s.status(), d.status(), p.status(), ceil.status(), pad.status(),
                                 auto_pad.status(), order.status()}) {
    if (!st.ok()) return st;
  }
  if (k->size() != 2) return NodeError(node, "attribute \"kernel_shape\" must have 2 entries, got ", k->size());
  if (s->size() != 2 || d->size() != 2 || p->size() != 4) {
    return NodeError(node, "attributes \"strides\" and \"dilations\" need 2 entries, \"pads\" 4; got ", s->size(),
                     ", ", d->size(), " and ", p->size());
  }
  if (*order != 0) return NodeError(node, "attribute \"storage_order\" must be 0");
  if (!max && ((*d)[0] != 1 || (*d)[1] != 1)) return NodeError(node, "AveragePool dilations must be 1");
  PoolGeometry g{(*k)[0], (*k)[1], (*s)[0], (*s)[1], (*d)[0], (*d)[1], (*p)[0], (*p)[1], (*p)[2], (*p)[3]};
  if (*auto_pad == "VALID") g.pt = g.pl = g.pb = g.pr = 0;
  g.include_pad = *pad != 0;
  const bool ceil_mode = *ceil != 0;
  auto oh = CheckedWindowOutput({x[2], g.kh, g.sh, g.dh, g.pt, g.pb, ceil_mode}, "height");
  if (!oh.ok()) return AtNode(node, oh.status());
  auto ow = CheckedWindowOutput({x[3], g.kw, g.sw, g.dw, g.pl, g.pr, ceil_mode}, "width");
  if (!ow.ok()) return AtNode(node, ow.status());
  // torch's rule: a pad larger than half the kernel makes windows of padding only.
  if (g.pt > g.kh / 2 || g.pb > g.kh / 2 || g.pl > g.kw / 2 || g.pr > g.kw / 2) {
    return NodeError(node, "attribute \"pads\" = [", g.pt, ",", g.pl, ",", g.pb, ",", g.pr,
                     "]: each pad must be at most half the kernel (", g.kh, "x", g.kw, ")");
  }
  g.oh = *oh;
  g.ow = *ow;
  // With an empty batch the output has no elements, so nothing else bounds one plane.
  if (auto n = CheckedElements({g.oh, g.ow}, "the output plane"); !n.ok()) return AtNode(node, n.status());
  return g;
}

std::vector<AttrDef> PoolAttributes(bool max) {
  std::vector<AttrDef> a = {{"kernel_shape", AttrKind::kInts}, {"strides", AttrKind::kInts},
                            {"pads", AttrKind::kInts},         {"dilations", AttrKind::kInts},
                            {"ceil_mode", AttrKind::kInt},     {"auto_pad", AttrKind::kString, {"NOTSET", "VALID"}}};
  a.push_back({max ? "storage_order" : "count_include_pad", AttrKind::kInt});
  return a;
}

namespace {

absl::StatusOr<std::vector<TensorType>> InferPool(InferContext& c, bool max) {
  const TensorType& x = *c.inputs[0];
  if (!IsFloat(x.dtype)) {
    return NodeError(c.node, InputLabel(c.node, 0), ": dtype ", DataTypeName(x.dtype),
                     " is not supported (FLOAT16, FLOAT32)");
  }
  auto g = PoolGeometryOf(c.node, c.attrs, x.shape, max);
  if (!g.ok()) return g.status();
  return std::vector<TensorType>{{x.dtype, {x.shape[0], x.shape[1], g->oh, g->ow}}};
}

// AveragePool's divisor per output position (AverageDivisor, pool_geometry.h).
std::vector<float> AverageDivisors(const PoolGeometry& g, int64_t h, int64_t w) {
  std::vector<float> d(static_cast<size_t>(g.oh * g.ow));
  for (int64_t oy = 0; oy < g.oh; ++oy) {
    for (int64_t ox = 0; ox < g.ow; ++ox) d[oy * g.ow + ox] = static_cast<float>(AverageDivisor(g, h, w, oy, ox));
  }
  return d;
}

absl::Status RunPool(RunContext& ctx, bool max) {
  const HostTensor& x = *ctx.inputs[0];
  const HostTensor& out = ctx.outputs[0];
  const Shape& s = x.type().shape;
  auto geo = PoolGeometryOf(ctx.node, ctx.attrs, s, max);
  if (!geo.ok()) return geo.status();
  const PoolGeometry& g = *geo;
  const int64_t h = s[2], w = s[3], planes = s[0] * s[1];
  if (planes == 0 || g.oh == 0 || g.ow == 0) return absl::OkStatus();
  kernels::StencilShape st;
  st.h = h, st.w = w, st.oh = g.oh, st.ow = g.ow, st.kh = g.kh, st.kw = g.kw;
  st.sh = g.sh, st.sw = g.sw, st.dh = g.dh, st.dw = g.dw, st.pt = g.pt, st.pl = g.pl;
  const std::vector<float> divisors = max ? std::vector<float>{} : AverageDivisors(g, h, w);
  const float pad = max ? -std::numeric_limits<float>::infinity() : 0.0f;
  const int64_t bytes = static_cast<int64_t>(ElementSize(x.type().dtype));
  const bool saturate = ctx.preset.fp16_saturation;
  const bool fp16 = x.type().dtype == v1::FLOAT16;
  const kernels::VectorKernelSet& k = kernels::VectorKernels();
  const kernels::StencilOp op = max ? kernels::StencilOp::kMax : kernels::StencilOp::kSum;
  const bool padded_plane = kernels::PaddingIsCheap(st);
  const kernels::StencilPlan plan = padded_plane ? kernels::PlanStencil(st, 1) : kernels::StencilPlan{};
  // One Vector pass per kernel tap over the output plane, in the input type's lanes.
  const device::TileWork plane_work =
      VectorChunkWork(g.oh * g.ow, h * w * bytes, g.oh * g.ow * bytes, bytes,
                      g.kh * g.kw * device::VectorPasses(device::VectorKernel::kPoolTap));
  ForEachUnitTile(ctx, planes, [&](device::TileWork& work, int64_t p0, int64_t p1) {
    thread_local std::vector<float> buf, res;
    buf.resize(static_cast<size_t>(padded_plane ? plan.plane_floats : h * w));
    for (int64_t p = p0; p < p1; ++p) {
      const void* plane = fp16 ? static_cast<const void*>(x.as<kernels::half_bits>() + p * h * w)
                               : static_cast<const void*>(x.as<float>() + p * h * w);
      if (padded_plane) {
        kernels::PadPlane(plan, plane, fp16, pad, buf.data());
        work.overflow_elements += k.stencil(op, plan, buf.data(), nullptr, pad, max ? nullptr : divisors.data(),
                                            DstAt(out, p * g.oh * g.ow), saturate);
      } else {  // a kernel far larger than the input: only its taps inside
        LoadAsFloat(x, p * h * w, 1, h * w, buf.data());
        res.resize(static_cast<size_t>(g.oh * g.ow));
        const float* in = buf.data();
        kernels::StencilSkippingPadding(op, st, &in, 1, nullptr, pad, max ? nullptr : divisors.data(), res.data());
        work.overflow_elements += StoreFromFloat(out, p * g.oh * g.ow, g.oh * g.ow, res.data(), saturate);
      }
      work += plane_work;
    }
  }, planes * (h * w + g.oh * g.ow * g.kh * g.kw));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<TensorType>> InferGlobalAvg(InferContext& c) {
  const TensorType& x = *c.inputs[0];
  if (!IsFloat(x.dtype) || x.shape.size() < 3) {
    return NodeError(c.node, InputLabel(c.node, 0), " must be FLOAT16/FLOAT32 of rank >= 3, got ", ToString(x));
  }
  Shape out = x.shape;
  std::fill(out.begin() + 2, out.end(), 1);
  return std::vector<TensorType>{{x.dtype, out}};
}

absl::Status RunGlobalAvg(RunContext& ctx) {
  const HostTensor& x = *ctx.inputs[0];
  const HostTensor& out = ctx.outputs[0];
  const int64_t planes = x.type().shape[0] * x.type().shape[1];
  const int64_t spatial = planes == 0 ? 0 : x.type().elements() / planes;
  if (planes == 0) return absl::OkStatus();
  std::vector<float> res(static_cast<size_t>(planes));
  const int64_t bytes = static_cast<int64_t>(ElementSize(x.type().dtype));
  const kernels::VectorKernelSet& k = kernels::VectorKernels();
  ForEachUnitTile(ctx, planes, [&](device::TileWork& w, int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const float sum = k.reduce(kernels::ReduceKind::kSum, SrcAt(x, p * spatial), static_cast<size_t>(spatial));
      res[p] = sum / static_cast<float>(spatial);  // no pixels: NaN, the mean of nothing (as torch)
      w += VectorChunkWork(spatial, spatial * bytes, bytes, 4, device::VectorPasses(device::VectorKernel::kReduce));
    }
    w.overflow_elements += StoreFromFloat(out, p0, p1 - p0, res.data() + p0, ctx.preset.fp16_saturation);
  });
  return absl::OkStatus();
}

OpDef PoolDef(std::string name, bool max) {
  OpDef d;
  d.name = std::move(name);
  d.units = "Vector, MTE2, MTE3";
  d.task_type = device::TaskType::kAiVectorCore;
  d.dtypes = {v1::FLOAT16, v1::FLOAT32};
  d.attributes = PoolAttributes(max);
  d.infer = [max](InferContext& c) { return InferPool(c, max); };
  d.run = [max](RunContext& c) { return RunPool(c, max); };
  return d;
}

}  // namespace

void RegisterPoolOps(OpRegistry& r) {
  r.Register(PoolDef("MaxPool", true));
  r.Register(PoolDef("AveragePool", false));
  OpDef g;
  g.name = "GlobalAveragePool";
  g.units = "Vector, MTE2, MTE3";
  g.task_type = device::TaskType::kAiVectorCore;
  g.dtypes = {v1::FLOAT16, v1::FLOAT32};
  g.infer = InferGlobalAvg;
  g.run = RunGlobalAvg;
  r.Register(std::move(g));
}

}  // namespace npu::graph::ops
