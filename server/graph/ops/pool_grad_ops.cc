// Gradients of MaxPool, AveragePool and LpPool (2-D NCHW, 3-D NCDHW), on the
// Vector unit with the forward's attributes: MaxPoolGrad(dY, X) sends each
// output's gradient to the first maximum of its window (the element the
// forward picked, NaN included, as torch does); AveragePoolGrad(dY, X) spreads
// it over the window divided as the forward divided; LpPoolGrad(dY, X) gives
// each tap dY |x|^(p-1) sign(x) / y^(p-1), the window's y recomputed from X.
// X gives MaxPool and LpPool their values and each op the input's shape. Sums
// run in fp32 in output order; the result rounds once.
#include <cmath>
#include <limits>
#include <vector>

#include "server/device/vector_passes.h"
#include "server/graph/element_access.h"
#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/pool_geometry.h"
#include "server/graph/ops/row_tiles.h"
#include "server/graph/ops/training_op_def.h"
#include "server/graph/vector_tiling.h"

namespace npu::graph::ops {
namespace {

// LpPool's window (taps zs x ys x xs from (z0, y0, x0)) with output
// gradient d: y = (sum |x|^p)^(1/p), so each tap gets
// d * |x|^(p-1) * sign(x) / y^(p-1) (0 where y is 0), in fp32.
void LpWindowGradient(const PoolGeometry& g, const float* in, TapRange zs, TapRange ys, TapRange xs, int64_t z0,
                      int64_t y0, int64_t x0, float d, float* res) {
  auto each = [&](auto&& f) {
    for (int64_t kz = zs.begin; kz < zs.end; ++kz) {
      for (int64_t ky = ys.begin; ky < ys.end; ++ky) {
        const int64_t row = ((z0 + kz * g.dd) * g.h + y0 + ky * g.dh) * g.w;
        for (int64_t kx = xs.begin; kx < xs.end; ++kx) f(row + x0 + kx * g.dw);
      }
    }
  };
  float sum = 0.0f;
  each([&](int64_t i) { sum += LpTerm(in[i], g.p); });
  const float pf = static_cast<float>(g.p);
  const float y = g.p == 1 ? sum : g.p == 2 ? std::sqrt(sum) : std::pow(sum, 1.0f / pf);
  if (!(y > 0.0f)) return;
  const float scale = d / (g.p == 1 ? 1.0f : g.p == 2 ? y : std::pow(y, pf - 1.0f));
  each([&](int64_t i) {
    const float v = in[i];
    const float a = g.p == 1 ? 1.0f : g.p == 2 ? std::fabs(v) : std::pow(std::fabs(v), pf - 1.0f);
    res[i] += scale * (v > 0.0f ? a : v < 0.0f ? -a : 0.0f);
  });
}

absl::StatusOr<std::vector<TensorType>> InferPoolGrad(InferContext& c, PoolKind kind) {
  if (auto s = CheckFloatInputs(c); !s.ok()) return s;
  const TensorType& dy = *c.inputs[0];
  const TensorType& x = *c.inputs[1];
  auto g = PoolGeometryOf(c.node, c.attrs, x.shape, kind);
  if (!g.ok()) return g.status();
  const Shape pooled = g->Pooled(x.shape[0], x.shape[1]);
  if (dy.shape != pooled) {
    return NodeError(c.node, "the gradient ", ToString(dy), " does not match the pooled shape ",
                     ShapeToString(pooled), " of input ", ToString(x));
  }
  return std::vector<TensorType>{{dy.dtype, x.shape}};
}

absl::Status RunPoolGrad(RunContext& ctx, PoolKind kind) {
  const bool max = kind == PoolKind::kMax, lp = kind == PoolKind::kLp;
  const HostTensor& dy = *ctx.inputs[0];
  const HostTensor& x = *ctx.inputs[1];
  const HostTensor& out = ctx.outputs[0];
  const Shape& s = x.type().shape;
  auto geo = PoolGeometryOf(ctx.node, ctx.attrs, s, kind);
  if (!geo.ok()) return geo.status();
  const PoolGeometry& g = *geo;
  const int64_t h = g.h, w = g.w, vol = g.in_volume(), volumes = s[0] * s[1], opix = g.out_volume();
  const int64_t dy_bytes = static_cast<int64_t>(ElementSize(dy.type().dtype));
  const int64_t x_bytes = max || lp ? static_cast<int64_t>(ElementSize(x.type().dtype)) : 0;
  const bool saturate = ctx.preset.fp16_saturation;
  ForEachRowTile(ctx, volumes, [&](int64_t begin, int64_t end, device::TileWork& work) {
    thread_local std::vector<float> in, grad, res;
    in.resize(static_cast<size_t>(vol));
    grad.resize(static_cast<size_t>(opix));
    res.resize(static_cast<size_t>(vol));
    for (int64_t p = begin; p < end; ++p) {
      if (max || lp) LoadAsFloat(x, p * vol, 1, vol, in.data());
      LoadAsFloat(dy, p * opix, 1, opix, grad.data());
      std::fill(res.begin(), res.end(), 0.0f);
      for (int64_t oz = 0; oz < g.od; ++oz) {
        const int64_t z0 = oz * g.sd - g.pf;
        const TapRange zs = TapsInside(z0, g.kd, g.dd, g.d);
        for (int64_t oy = 0; oy < g.oh; ++oy) {
          for (int64_t ox = 0; ox < g.ow; ++ox) {
            const int64_t y0 = oy * g.sh - g.pt, x0 = ox * g.sw - g.pl;
            const float d = grad[(oz * g.oh + oy) * g.ow + ox];
            float best = -std::numeric_limits<float>::infinity();
            int64_t at = -1;
            const float share = kind == PoolKind::kAverage ? d / static_cast<float>(AverageDivisor(g, oz, oy, ox)) : 0.0f;
            // Only the taps that land in the input (a kernel may be far larger than it).
            const TapRange ys = TapsInside(y0, g.kh, g.dh, h), xs = TapsInside(x0, g.kw, g.dw, w);
            if (lp) {
              LpWindowGradient(g, in.data(), zs, ys, xs, z0, y0, x0, d, res.data());
              continue;
            }
            for (int64_t kz = zs.begin; kz < zs.end; ++kz) {
              const int64_t iz = z0 + kz * g.dd;
              for (int64_t ky = ys.begin; ky < ys.end; ++ky) {
                const int64_t row = (iz * h + y0 + ky * g.dh) * w;
                for (int64_t kx = xs.begin; kx < xs.end; ++kx) {
                  const int64_t i = row + x0 + kx * g.dw;
                  if (!max) {
                    res[i] += share;
                    continue;
                  }
                  const float v = in[i];
                  if (at < 0) at = i;  // torch's default: the window's first element
                  if (v > best || v != v) best = v, at = i;
                }
              }
            }
            if (max && at >= 0) res[at] += d;
          }
          // One Vector pass per kernel tap over the output row (select or scatter-add).
          work += VectorChunkWork(g.ow, 0, 0, 4,
                                  g.kd * g.kh * g.kw * device::VectorPasses(device::VectorKernel::kPoolTap));
        }
      }
      work.overflow_elements += StoreFromFloat(out, p * vol, vol, res.data(), saturate);
      work.mte2_bytes += static_cast<uint64_t>(opix * dy_bytes + vol * x_bytes);
      work.mte3_bytes += static_cast<uint64_t>(vol * static_cast<int64_t>(ElementSize(out.type().dtype)));
    }
  });
  return absl::OkStatus();
}

}  // namespace

void RegisterPoolGradOps(OpRegistry& r) {
  for (PoolKind kind : {PoolKind::kMax, PoolKind::kAverage, PoolKind::kLp}) {
    const char* name = kind == PoolKind::kMax ? "MaxPoolGrad" : kind == PoolKind::kAverage ? "AveragePoolGrad" : "LpPoolGrad";
    r.Register(WithAttributes(TrainingOpDef(name, 2, 2, 1, [kind](InferContext& c) { return InferPoolGrad(c, kind); },
                                            [kind](RunContext& c) { return RunPoolGrad(c, kind); }),
                              PoolAttributes(kind)));
  }
}

}  // namespace npu::graph::ops
