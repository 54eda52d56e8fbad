// MaxPool, AveragePool (2-D, NCHW; kernel_shape, strides, pads, dilations for
// MaxPool, ceil_mode, count_include_pad) and GlobalAveragePool (any spatial
// rank) on the Vector unit: each output row is built by one Vector pass per
// kernel tap over the input rows in UB.
#include <algorithm>
#include <limits>
#include <vector>

#include "server/device/vector_passes.h"
#include "server/graph/element_access.h"
#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/parallel_for.h"
#include "server/graph/shape_math.h"
#include "server/graph/vector_tiling.h"

namespace npu::graph::ops {
namespace {

struct PoolGeometry {
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t pt = 0, pl = 0, pb = 0, pr = 0;
  int64_t oh = 0, ow = 0;
  bool include_pad = false;
};

// Taps k in [begin, end) of a window starting at `start` (stride `dilation`)
// that land in [0, extent). Offsets are bounded by the padded extent
// (CheckedWindowOutput), so nothing here overflows.
struct TapRange {
  int64_t begin = 0, end = 0;
};
TapRange TapsInside(int64_t start, int64_t kernel, int64_t dilation, int64_t extent) {
  TapRange r;
  r.begin = start >= 0 ? 0 : (-start + dilation - 1) / dilation;
  r.end = start >= extent ? 0 : std::min(kernel, (extent - 1 - start) / dilation + 1);
  r.end = std::max(r.end, r.begin);
  return r;
}

absl::StatusOr<PoolGeometry> Geometry(const v1::Node& node, const NodeAttributes& attrs, const Shape& x, bool max) {
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
  if (*auto_pad != "NOTSET" && *auto_pad != "VALID") {
    return NodeError(node, "attribute \"auto_pad\" = ", Quoted(*auto_pad), " is not supported (NOTSET, VALID)");
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

absl::StatusOr<std::vector<TensorType>> InferPool(InferContext& c, bool max) {
  if (max) {
    if (auto s = c.attrs.CheckKnown({"kernel_shape", "strides", "pads", "dilations", "ceil_mode", "auto_pad",
                                     "storage_order"});
        !s.ok()) {
      return s;
    }
  } else if (auto s = c.attrs.CheckKnown({"kernel_shape", "strides", "pads", "dilations", "ceil_mode", "auto_pad",
                                            "count_include_pad"});
             !s.ok()) {
    return s;
  }
  const TensorType& x = *c.inputs[0];
  if (!IsFloat(x.dtype)) {
    return NodeError(c.node, InputLabel(c.node, 0), ": dtype ", DataTypeName(x.dtype),
                     " is not supported (FLOAT16, FLOAT32)");
  }
  auto g = Geometry(c.node, c.attrs, x.shape, max);
  if (!g.ok()) return g.status();
  return std::vector<TensorType>{{x.dtype, {x.shape[0], x.shape[1], g->oh, g->ow}}};
}

absl::Status RunPool(RunContext& ctx, bool max) {
  const HostTensor& x = *ctx.inputs[0];
  const HostTensor& out = ctx.outputs[0];
  const Shape& s = x.type().shape;
  auto geo = Geometry(ctx.node, ctx.attrs, s, max);
  if (!geo.ok()) return geo.status();
  const PoolGeometry& g = *geo;
  const int64_t h = s[2], w = s[3], planes = s[0] * s[1];
  if (planes == 0 || g.oh == 0 || g.ow == 0) return absl::OkStatus();
  const int64_t tiles = std::min<int64_t>(planes, ctx.preset.vector_unit_cores());
  ctx.work.tiles.assign(static_cast<size_t>(tiles), device::TileWork{});
  const int64_t bytes = static_cast<int64_t>(ElementSize(x.type().dtype));
  const bool saturate = ctx.preset.fp16_saturation;
  ParallelFor(tiles, [&](int64_t t) {
    device::TileWork& work = ctx.work.tiles[static_cast<size_t>(t)];
    work.pipeline_steps = 0;
    thread_local std::vector<float> in, res;
    in.resize(static_cast<size_t>(h * w));
    res.resize(static_cast<size_t>(g.oh * g.ow));
    for (int64_t p = planes * t / tiles; p < planes * (t + 1) / tiles; ++p) {
      LoadAsFloat(x, p * h * w, 1, h * w, in.data());
      for (int64_t oy = 0; oy < g.oh; ++oy) {
        for (int64_t ox = 0; ox < g.ow; ++ox) {
          const int64_t y0 = oy * g.sh - g.pt, x0 = ox * g.sw - g.pl;
          float acc = max ? -std::numeric_limits<float>::infinity() : 0.0f;
          int64_t count = 0;
          // Only the taps that land in the input: a kernel (an attribute) may be far larger than it.
          const TapRange ys = TapsInside(y0, g.kh, g.dh, h), xs = TapsInside(x0, g.kw, g.dw, w);
          for (int64_t ky = ys.begin; ky < ys.end; ++ky) {
            const int64_t iy = y0 + ky * g.dh;
            for (int64_t kx = xs.begin; kx < xs.end; ++kx) {
              const int64_t ix = x0 + kx * g.dw;
              const float v = in[iy * w + ix];
              acc = max ? ((v > acc || v != v) ? v : acc) : acc + v;
              ++count;
            }
          }
          if (!max) {
            // torch's divisor: the window clipped to the padded input, or to the input itself.
            const int64_t y1 = std::min(y0 + g.kh, h + g.pb), x1 = std::min(x0 + g.kw, w + g.pr);
            const int64_t padded = (y1 - y0) * (x1 - x0);
            acc /= static_cast<float>(g.include_pad ? padded : std::max<int64_t>(count, 1));
          }
          res[oy * g.ow + ox] = acc;
        }
        // One Vector pass per kernel tap over the output row, in the input type's lanes.
        work += VectorChunkWork(g.ow, 0, 0, bytes, g.kh * g.kw * device::VectorPasses(device::VectorKernel::kPoolTap));
      }
      StoreFromFloat(out, p * g.oh * g.ow, g.oh * g.ow, res.data(), saturate);
      work.mte2_bytes += static_cast<uint64_t>(h * w * bytes);
      work.mte3_bytes += static_cast<uint64_t>(g.oh * g.ow * bytes);
    }
    work.pipeline_steps = std::max<uint64_t>(1, work.pipeline_steps);
  });
  return absl::OkStatus();
}

absl::StatusOr<std::vector<TensorType>> InferGlobalAvg(InferContext& c) {
  if (auto s = c.attrs.CheckKnown({}); !s.ok()) return s;
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
  const int64_t tiles = std::min<int64_t>(planes, ctx.preset.vector_unit_cores());
  ctx.work.tiles.assign(static_cast<size_t>(tiles), device::TileWork{});
  const int64_t bytes = static_cast<int64_t>(ElementSize(x.type().dtype));
  ParallelFor(tiles, [&](int64_t t) {
    device::TileWork& w = ctx.work.tiles[static_cast<size_t>(t)];
    w.pipeline_steps = 0;
    thread_local std::vector<float> buf;
    buf.resize(static_cast<size_t>(spatial));
    for (int64_t p = planes * t / tiles; p < planes * (t + 1) / tiles; ++p) {
      LoadAsFloat(x, p * spatial, 1, spatial, buf.data());
      float sum = 0.0f;
      for (float v : buf) sum += v;
      res[p] = sum / static_cast<float>(spatial);  // no pixels: NaN, the mean of nothing (as torch)
      w += VectorChunkWork(spatial, spatial * bytes, bytes, 4, device::VectorPasses(device::VectorKernel::kReduce));
    }
    w.pipeline_steps = std::max<uint64_t>(1, w.pipeline_steps);
  });
  StoreFromFloat(out, 0, planes, res.data(), ctx.preset.fp16_saturation);
  return absl::OkStatus();
}

OpDef PoolDef(std::string name, bool max) {
  OpDef d;
  d.name = std::move(name);
  d.units = "Vector, MTE2, MTE3";
  d.task_type = device::TaskType::kAiVectorCore;
  d.dtypes = {v1::FLOAT16, v1::FLOAT32};
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
