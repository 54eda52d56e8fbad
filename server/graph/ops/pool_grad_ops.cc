// Gradients of MaxPool and AveragePool (2-D NCHW, 3-D NCDHW), on the Vector unit with
// the forward's attributes: MaxPoolGrad(dY, X) sends each output's gradient to
// the first maximum of its window (the element the forward picked, NaN
// included, as torch does); AveragePoolGrad(dY, X) spreads it over the window
// divided as the forward divided. X gives MaxPool its values and both ops the
// input's shape. Sums run in fp32 in output order; the result rounds once.
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

absl::StatusOr<std::vector<TensorType>> InferPoolGrad(InferContext& c, bool max) {
  if (auto s = CheckFloatInputs(c); !s.ok()) return s;
  const TensorType& dy = *c.inputs[0];
  const TensorType& x = *c.inputs[1];
  auto g = PoolGeometryOf(c.node, c.attrs, x.shape, max);
  if (!g.ok()) return g.status();
  const Shape pooled = g->Pooled(x.shape[0], x.shape[1]);
  if (dy.shape != pooled) {
    return NodeError(c.node, "the gradient ", ToString(dy), " does not match the pooled shape ",
                     ShapeToString(pooled), " of input ", ToString(x));
  }
  return std::vector<TensorType>{{dy.dtype, x.shape}};
}

absl::Status RunPoolGrad(RunContext& ctx, bool max) {
  const HostTensor& dy = *ctx.inputs[0];
  const HostTensor& x = *ctx.inputs[1];
  const HostTensor& out = ctx.outputs[0];
  const Shape& s = x.type().shape;
  auto geo = PoolGeometryOf(ctx.node, ctx.attrs, s, max);
  if (!geo.ok()) return geo.status();
  const PoolGeometry& g = *geo;
  const int64_t h = g.h, w = g.w, vol = g.in_volume(), volumes = s[0] * s[1], opix = g.out_volume();
  const int64_t dy_bytes = static_cast<int64_t>(ElementSize(dy.type().dtype));
  const int64_t x_bytes = max ? static_cast<int64_t>(ElementSize(x.type().dtype)) : 0;
  const bool saturate = ctx.preset.fp16_saturation;
  ForEachRowTile(ctx, volumes, [&](int64_t begin, int64_t end, device::TileWork& work) {
    thread_local std::vector<float> in, grad, res;
    in.resize(static_cast<size_t>(vol));
    grad.resize(static_cast<size_t>(opix));
    res.resize(static_cast<size_t>(vol));
    for (int64_t p = begin; p < end; ++p) {
      if (max) LoadAsFloat(x, p * vol, 1, vol, in.data());
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
            const float share = max ? 0.0f : d / static_cast<float>(AverageDivisor(g, oz, oy, ox));
            // Only the taps that land in the input (a kernel may be far larger than it).
            const TapRange ys = TapsInside(y0, g.kh, g.dh, h), xs = TapsInside(x0, g.kw, g.dw, w);
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
  for (bool max : {true, false}) {
    r.Register(WithAttributes(
        TrainingOpDef(
            max ? "MaxPoolGrad" : "AveragePoolGrad", 2, 2, 1, [max](InferContext& c) { return InferPoolGrad(c, max); },
            [max](RunContext& c) { return RunPoolGrad(c, max); }),
        PoolAttributes(max)));
  }
}

}  // namespace npu::graph::ops
