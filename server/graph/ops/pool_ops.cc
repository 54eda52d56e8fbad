// MaxPool, AveragePool, LpPool (2-D NCHW and 3-D NCDHW; kernel_shape, strides,
// pads, dilations but AveragePool's, ceil_mode, count_include_pad, p) and GlobalAveragePool
// (any spatial rank) on the Vector unit. A pooled plane is loaded into UB
// padded (and split by the horizontal stride), then each output row is built
// by one Vector pass per kernel tap (kernels/stencil.h); a 3-D window's depth
// taps are that many planes of one stencil.
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
                                            PoolKind kind) {
  if (x.size() < 3 || x.size() > 5) {
    return NodeError(node, InputLabel(node, 0),
                     " must be 3-D (N, C, L), 4-D (N, C, H, W) or 5-D (N, C, D, H, W), got rank ", x.size());
  }
  const size_t sp = x.size() - 2;  // spatial axes
  // torch pools only batches that are empty: a window over no channels or no pixels is undefined.
  if (std::any_of(x.begin() + 1, x.end(), [](int64_t v) { return v == 0; })) {
    return NodeError(node, InputLabel(node, 0), " ", ShapeToString(x),
                     ": only the batch dimension may be 0 (channels and spatial dims need >= 1)");
  }
  auto k = attrs.Ints("kernel_shape", {});
  auto s = attrs.Ints("strides", std::vector<int64_t>(sp, 1));
  auto d = attrs.Ints("dilations", std::vector<int64_t>(sp, 1));
  auto p = attrs.Ints("pads", std::vector<int64_t>(2 * sp, 0));
  auto ceil = attrs.Int("ceil_mode", 0);
  auto pad = attrs.Int("count_include_pad", 0);
  auto auto_pad = attrs.String("auto_pad", "NOTSET");
  auto order = attrs.Int("storage_order", 0);
  auto exponent = attrs.Int("p", 2);
  for (const absl::Status& st : {k.status(), s.status(), d.status(), p.status(), ceil.status(), pad.status(),
                                 auto_pad.status(), order.status(), exponent.status()}) {
    if (!st.ok()) return st;
  }
  if (kind == PoolKind::kLp && (*exponent < 1 || *exponent > 64)) {
    return NodeError(node, "attribute \"p\" = ", *exponent, " must be in [1, 64]");
  }
  if (k->size() != sp) {
    return NodeError(node, "attribute \"kernel_shape\" must have ", sp, " entries (input ", ShapeToString(x),
                     "), got ", k->size());
  }
  if (s->size() != sp || d->size() != sp || p->size() != 2 * sp) {
    return NodeError(node, "attributes \"strides\" and \"dilations\" need ", sp, " entries, \"pads\" ", 2 * sp,
                     "; got ", s->size(), ", ", d->size(), " and ", p->size());
  }
  if (*order != 0 && *order != 1) {
    return NodeError(node, "attribute \"storage_order\" = ", *order, " must be 0 (row major) or 1 (column major)");
  }
  if (kind == PoolKind::kAverage && std::any_of(d->begin(), d->end(), [](int64_t v) { return v != 1; })) {
    return NodeError(node, "AveragePool dilations must be 1");
  }
  // Axis a of the window (0: depth, 1: height, 2: width); a 2-D pool has a unit depth.
  const size_t lead = 3 - sp;
  auto at = [&](const std::vector<int64_t>& v, size_t axis, int64_t unit) { return axis < lead ? unit : v[axis - lead]; };
  auto pad_of = [&](size_t axis, bool end) { return axis < lead ? 0 : (*p)[axis - lead + (end ? sp : 0)]; };
  PoolGeometry g;
  g.rank = static_cast<int64_t>(x.size());
  g.kd = at(*k, 0, 1), g.kh = at(*k, 1, 1), g.kw = at(*k, 2, 1);
  g.sd = at(*s, 0, 1), g.sh = at(*s, 1, 1), g.sw = at(*s, 2, 1);
  g.dd = at(*d, 0, 1), g.dh = at(*d, 1, 1), g.dw = at(*d, 2, 1);
  g.pf = pad_of(0, false), g.pt = pad_of(1, false), g.pl = pad_of(2, false);
  g.pk = pad_of(0, true), g.pb = pad_of(1, true), g.pr = pad_of(2, true);
  if (*auto_pad == "VALID") g.pf = g.pk = g.pt = g.pl = g.pb = g.pr = 0;
  g.include_pad = *pad != 0;
  g.column_major = *order == 1;
  g.p = *exponent;
  g.d = sp == 3 ? x[2] : 1, g.h = sp >= 2 ? x[x.size() - 2] : 1, g.w = x.back();
  const bool ceil_mode = *ceil != 0;
  auto od = CheckedWindowOutput({g.d, g.kd, g.sd, g.dd, g.pf, g.pk, ceil_mode}, "depth");
  if (!od.ok()) return AtNode(node, od.status());
  auto oh = CheckedWindowOutput({g.h, g.kh, g.sh, g.dh, g.pt, g.pb, ceil_mode}, "height");
  if (!oh.ok()) return AtNode(node, oh.status());
  auto ow = CheckedWindowOutput({g.w, g.kw, g.sw, g.dw, g.pl, g.pr, ceil_mode}, "width");
  if (!ow.ok()) return AtNode(node, ow.status());
  // torch's rule: a pad larger than half the kernel makes windows of padding only.
  for (size_t a = lead; a < 3; ++a) {
    const int64_t kernel = (*k)[a - lead];
    if (pad_of(a, false) > kernel / 2 || pad_of(a, true) > kernel / 2) {
      return NodeError(node, "attribute \"pads\" = ", ShapeToString(*p),
                       ": each pad must be at most half the kernel ", ShapeToString(*k));
    }
  }
  g.od = *od, g.oh = *oh, g.ow = *ow;
  // With an empty batch the output has no elements, so nothing else bounds one plane.
  if (auto n = CheckedElements({g.od, g.oh, g.ow}, "the output plane"); !n.ok()) return AtNode(node, n.status());
  // Each window's taps are visited once per output: a kernel of 2^32 x 2^32
  // over a 1 x 1 input (the pads hide it) overflowed the kernels' counts.
  const long double taps = static_cast<long double>(g.kd) * g.kh * g.kw;
  const long double visits = taps * static_cast<long double>(x[0]) * x[1] * g.out_volume();
  if (taps > kMaxElements || visits > kMaxElements) {
    return NodeError(node, "kernel ", ShapeToString(*k), " over the output ", ShapeToString(g.Pooled(x[0], x[1])),
                     " visits ", static_cast<double>(visits), " taps, past the ", kMaxElements, " a pool may take");
  }
  return g;
}

std::vector<AttrDef> PoolAttributes(PoolKind kind) {
  std::vector<AttrDef> a = {{"kernel_shape", AttrKind::kInts}, {"strides", AttrKind::kInts},
                            {"pads", AttrKind::kInts},         {"dilations", AttrKind::kInts},
                            {"ceil_mode", AttrKind::kInt},     {"auto_pad", AttrKind::kString, {"NOTSET", "VALID"}}};
  a.push_back({kind == PoolKind::kMax ? "storage_order" : kind == PoolKind::kLp ? "p" : "count_include_pad",
               AttrKind::kInt});
  return a;
}

namespace {

absl::StatusOr<std::vector<TensorType>> InferPool(InferContext& c, PoolKind kind) {
  const TensorType& x = *c.inputs[0];
  if (!IsFloat(x.dtype)) {
    return NodeError(c.node, InputLabel(c.node, 0), ": dtype ", DataTypeName(x.dtype),
                     " is not supported (FLOAT16, FLOAT32)");
  }
  auto g = PoolGeometryOf(c.node, c.attrs, x.shape, kind);
  if (!g.ok()) return g.status();
  const Shape pooled = g->Pooled(x.shape[0], x.shape[1]);
  // MaxPool's optional second output: where each maximum came from.
  if (c.node.outputs_size() > 1) return std::vector<TensorType>{{x.dtype, pooled}, {v1::INT64, pooled}};
  return std::vector<TensorType>{{x.dtype, pooled}};
}

// MaxPool's Indices, as ONNX defines them: the flat index into X (batch and
// channel included) of each window's first maximum in (depth, row, column)
// order, with the spatial axes row major (storage_order 0) or column major
// (1); padding never wins. On the device a compare-and-select per tap beside
// the max (CANN's MaxPoolWithArgmax), one more Vector pass per tap.
void RunPoolIndices(RunContext& ctx, const PoolGeometry& g) {
  const HostTensor& x = *ctx.inputs[0];
  const HostTensor& indices = ctx.outputs[1];
  const int64_t volumes = x.type().shape[0] * x.type().shape[1], vol = g.in_volume();
  // Strides of (z, y, x) in the index's spatial order.
  const int64_t sz = g.column_major ? 1 : g.h * g.w, sy = g.column_major ? g.d : g.w, sx = g.column_major ? g.d * g.h : 1;
  const int64_t bytes = static_cast<int64_t>(ElementSize(x.type().dtype));
  ForEachUnitTile(ctx, volumes, [&](device::TileWork& work, int64_t p0, int64_t p1) {
    thread_local std::vector<float> in;
    thread_local std::vector<int64_t> out;
    in.resize(static_cast<size_t>(vol));
    out.resize(static_cast<size_t>(g.out_volume()));
    for (int64_t p = p0; p < p1; ++p) {
      LoadAsFloat(x, p * vol, 1, vol, in.data());
      int64_t* o = out.data();
      for (int64_t oz = 0; oz < g.od; ++oz) {
        const int64_t z0 = oz * g.sd - g.pf;
        const TapRange zs = TapsInside(z0, g.kd, g.dd, g.d);
        for (int64_t oy = 0; oy < g.oh; ++oy) {
          const int64_t y0 = oy * g.sh - g.pt;
          const TapRange ys = TapsInside(y0, g.kh, g.dh, g.h);
          for (int64_t ox = 0; ox < g.ow; ++ox) {
            const int64_t x0 = ox * g.sw - g.pl;
            const TapRange xs = TapsInside(x0, g.kw, g.dw, g.w);
            int64_t best = -1;
            float top = 0.0f;
            for (int64_t tz = zs.begin; tz < zs.end; ++tz) {
              const int64_t z = z0 + tz * g.dd;
              for (int64_t ty = ys.begin; ty < ys.end; ++ty) {
                const int64_t y = y0 + ty * g.dh;
                for (int64_t tx = xs.begin; tx < xs.end; ++tx) {
                  const int64_t xx = x0 + tx * g.dw;
                  const float v = in[static_cast<size_t>((z * g.h + y) * g.w + xx)];
                  if (best < 0 || v > top) best = z * sz + y * sy + xx * sx, top = v;
                }
              }
            }
            *o++ = best < 0 ? -1 : p * vol + best;
          }
        }
      }
      StoreFromInt64(indices, p * g.out_volume(), g.out_volume(), out.data());
      work += VectorChunkWork(g.out_volume(), 0, g.out_volume() * 8, bytes,
                              g.kd * g.kh * g.kw * device::VectorPasses(device::VectorKernel::kPoolTap));
    }
  }, volumes * g.out_volume() * g.kd * g.kh * g.kw);
}

// AveragePool's divisor per output position (AverageDivisor, pool_geometry.h).
std::vector<float> AverageDivisors(const PoolGeometry& g) {
  std::vector<float> d(static_cast<size_t>(g.out_volume()));
  for (int64_t oz = 0, i = 0; oz < g.od; ++oz) {
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      for (int64_t ox = 0; ox < g.ow; ++ox) d[i++] = static_cast<float>(AverageDivisor(g, oz, oy, ox));
    }
  }
  return d;
}

// Each output plane oz of a volume is the 2-D stencil over the input planes
// its window's depth taps land on, as one stencil of that many channels: the
// taps in (depth, ky, kx) order. A 2-D pool is the volume of one plane.
// LpPool sums |x|^p (its planes raised in fp32 on the way into UB), then
// takes the p-th root of each sum before the one rounding.
absl::Status RunPool(RunContext& ctx, PoolKind kind) {
  const bool max = kind == PoolKind::kMax, lp = kind == PoolKind::kLp;
  const HostTensor& x = *ctx.inputs[0];
  const HostTensor& out = ctx.outputs[0];
  const Shape& s = x.type().shape;
  auto geo = PoolGeometryOf(ctx.node, ctx.attrs, s, kind);
  if (!geo.ok()) return geo.status();
  const PoolGeometry& g = *geo;
  const int64_t h = g.h, w = g.w, plane = h * w, vol = g.in_volume(), opl = g.oh * g.ow, volumes = s[0] * s[1];
  if (volumes == 0 || g.out_volume() == 0) return absl::OkStatus();
  kernels::StencilShape st;
  st.h = h, st.w = w, st.oh = g.oh, st.ow = g.ow, st.kh = g.kh, st.kw = g.kw;
  st.sh = g.sh, st.sw = g.sw, st.dh = g.dh, st.dw = g.dw, st.pt = g.pt, st.pl = g.pl;
  const std::vector<float> divisors = kind == PoolKind::kAverage ? AverageDivisors(g) : std::vector<float>{};
  const float pad = max ? -std::numeric_limits<float>::infinity() : 0.0f;
  const int64_t bytes = static_cast<int64_t>(ElementSize(x.type().dtype));
  const bool saturate = ctx.preset.fp16_saturation;
  const bool fp16 = x.type().dtype == v1::FLOAT16;
  const kernels::VectorKernelSet& k = kernels::VectorKernels();
  const kernels::StencilOp op = max ? kernels::StencilOp::kMax : kernels::StencilOp::kSum;
  // The padded planes of a volume lie one after the other, so the depth taps
  // of a window are consecutive planes when they are consecutive slices.
  const bool padded_planes = kernels::PaddingIsCheap(st) && g.dd == 1;
  std::vector<kernels::StencilPlan> plans;  // by the number of depth taps inside the input
  for (int64_t n = 0; padded_planes && n <= std::min(g.kd, g.d); ++n) {
    plans.push_back(n == 0 ? kernels::StencilPlan{} : kernels::PlanStencil(st, static_cast<size_t>(n)));
  }
  const int64_t plane_floats = padded_planes ? plans[1].plane_floats : plane;
  ForEachUnitTile(ctx, volumes, [&](device::TileWork& work, int64_t p0, int64_t p1) {
    thread_local std::vector<float> buf, res, terms;
    buf.resize(static_cast<size_t>(g.d * plane_floats));
    res.resize(static_cast<size_t>(opl));
    std::vector<const float*> taps(static_cast<size_t>(g.kd));
    for (int64_t p = p0; p < p1; ++p) {
      for (int64_t iz = 0; iz < g.d; ++iz) {
        const int64_t at = p * vol + iz * plane;
        if (lp) {
          terms.resize(static_cast<size_t>(plane));
          LoadAsFloat(x, at, 1, plane, terms.data());
          for (float& v : terms) v = LpTerm(v, g.p);
          if (padded_planes) {
            kernels::PadPlane(plans[1], terms.data(), false, pad, buf.data() + iz * plane_floats);
          } else {
            std::copy(terms.begin(), terms.end(), buf.begin() + iz * plane);
          }
        } else if (padded_planes) {
          const void* in = fp16 ? static_cast<const void*>(x.as<kernels::half_bits>() + at)
                                : static_cast<const void*>(x.as<float>() + at);
          kernels::PadPlane(plans[1], in, fp16, pad, buf.data() + iz * plane_floats);
        } else {  // kernels far larger than the input, or dilated depth: only the taps inside
          LoadAsFloat(x, at, 1, plane, buf.data() + iz * plane);
        }
      }
      work.mte2_bytes += static_cast<uint64_t>(vol * bytes);
      for (int64_t oz = 0; oz < g.od; ++oz) {
        const int64_t z0 = oz * g.sd - g.pf;
        const TapRange zs = TapsInside(z0, g.kd, g.dd, g.d);
        const int64_t count = zs.end - zs.begin, first = z0 + zs.begin * g.dd;
        const float* divisor = divisors.empty() ? nullptr : divisors.data() + oz * opl;
        const int64_t dst = (p * g.od + oz) * opl;
        if (lp) {
          if (padded_planes && count > 0) {
            k.stencil(op, plans[static_cast<size_t>(count)], buf.data() + first * plane_floats, nullptr, pad, nullptr,
                      kernels::F32Dst(res.data()), saturate);
          } else {
            for (int64_t t = 0; t < count; ++t) taps[t] = buf.data() + (first + t * g.dd) * plane;
            kernels::StencilSkippingPadding(op, st, taps.data(), static_cast<size_t>(count), nullptr, pad, nullptr,
                                            res.data());
          }
          for (float& v : res) v = g.p == 1 ? v : g.p == 2 ? std::sqrt(v) : std::pow(v, 1.0f / static_cast<float>(g.p));
          work.overflow_elements += StoreFromFloat(out, dst, opl, res.data(), saturate);
        } else if (padded_planes && count > 0) {
          work.overflow_elements += k.stencil(op, plans[static_cast<size_t>(count)], buf.data() + first * plane_floats,
                                              nullptr, pad, divisor, DstAt(out, dst), saturate);
        } else {
          for (int64_t t = 0; t < count; ++t) taps[t] = buf.data() + (first + t * g.dd) * plane;
          kernels::StencilSkippingPadding(op, st, taps.data(), static_cast<size_t>(count), nullptr, pad, divisor,
                                          res.data());
          work.overflow_elements += StoreFromFloat(out, dst, opl, res.data(), saturate);
        }
        // One Vector pass per kernel tap over the output plane, in the input type's lanes (LpPool:
        // fp32, with the power and the root).
        work += VectorChunkWork(opl, 0, opl * bytes, lp ? 4 : bytes,
                                std::max<int64_t>(count, 1) * g.kh * g.kw *
                                        device::VectorPasses(device::VectorKernel::kPoolTap) +
                                    (lp ? 2 * device::VectorPasses(device::VectorKernel::kPow) : 0));
      }
    }
  }, volumes * (vol + g.out_volume() * g.kd * g.kh * g.kw));
  if (max && ctx.outputs.size() > 1) RunPoolIndices(ctx, g);
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

OpDef PoolDef(std::string name, PoolKind kind) {
  OpDef d;
  d.name = std::move(name);
  d.units = "Vector, MTE2, MTE3";
  d.task_type = device::TaskType::kAiVectorCore;
  d.dtypes = {v1::FLOAT16, v1::FLOAT32};
  d.attributes = PoolAttributes(kind);
  d.infer = [kind](InferContext& c) { return InferPool(c, kind); };
  d.run = [kind](RunContext& c) { return RunPool(c, kind); };
  if (kind == PoolKind::kMax) d.num_outputs = 2;  // Y and the optional Indices
  return d;
}

}  // namespace

void RegisterPoolOps(OpRegistry& r) {
  r.Register(PoolDef("MaxPool", PoolKind::kMax));
  r.Register(PoolDef("AveragePool", PoolKind::kAverage));
  r.Register(PoolDef("LpPool", PoolKind::kLp));
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
