// Gradients of the normalisations, on the Vector unit in fp32:
//   LayerNormalizationGrad(dY, X, scale, Mean, InvStdDev; axis) -> dX, dScale, dBias
//     with xhat = (x - mean) * inv, g = dY * scale over each normalised row:
//     dX = inv * (g - mean(g) - xhat * mean(g * xhat)),
//     dScale = sum over rows of dY * xhat, dBias = sum over rows of dY.
//   BatchNormalizationGrad(dY, X, scale; epsilon) -> dX, dScale, dBias
//     (training mode: the batch statistics, recomputed from X as the forward
//     computed them), per channel over the M = N * pixels values:
//     dBias = sum dY, dScale = sum dY * xhat,
//     dX = scale * inv * (dY - dBias / M - xhat * dScale / M).
// Names and inputs follow ONNX Runtime's training ops, except that the batch
// statistics are recomputed rather than saved by the forward.
#include <vector>

#include "server/device/vector_passes.h"
#include "server/graph/element_access.h"
#include "server/graph/node_error.h"
#include "server/graph/ops/batch_norm_training.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/row_tiles.h"
#include "server/graph/ops/shape_args.h"
#include "server/graph/ops/training_op_def.h"
#include "server/graph/vector_tiling.h"

namespace npu::graph::ops {
namespace {

// ---- LayerNormalizationGrad -------------------------------------------------

struct RowSplit {
  int64_t rows = 0, n = 0;  // rows of n normalised elements
};

absl::StatusOr<RowSplit> SplitRows(const v1::Node& node, const NodeAttributes& attrs, const Shape& x) {
  const int64_t rank = static_cast<int64_t>(x.size());
  auto attr = attrs.Int("axis", -1);
  if (!attr.ok()) return attr.status();
  auto axis = NormalizeAxis(node, *attr, rank);
  if (!axis.ok()) return axis.status();
  RowSplit s{1, 1};
  for (int64_t d = 0; d < rank; ++d) (d < *axis ? s.rows : s.n) *= x[d];
  return s;
}

absl::StatusOr<std::vector<TensorType>> InferLayerNormGrad(InferContext& c) {
  if (auto s = CheckFloatInputs(c); !s.ok()) return s;
  const TensorType& dy = *c.inputs[0];
  const TensorType& x = *c.inputs[1];
  if (dy.shape != x.shape) {
    return NodeError(c.node, "the gradient ", ToString(dy), " and the input ", ToString(x), " differ in shape");
  }
  auto split = SplitRows(c.node, c.attrs, x.shape);
  if (!split.ok()) return split.status();
  if (c.inputs[2]->elements() != split->n) {
    return NodeError(c.node, "scale ", ToString(*c.inputs[2]), " must have ", split->n, " elements");
  }
  for (int i = 3; i < 5; ++i) {
    if (c.inputs[i]->elements() != split->rows) {
      return NodeError(c.node, "input \"", c.node.inputs(i), "\" ", ToString(*c.inputs[i]), " must have one value per row (",
                       split->rows, ")");
    }
  }
  return std::vector<TensorType>{dy, *c.inputs[2], *c.inputs[2]};
}

absl::Status RunLayerNormGrad(RunContext& ctx) {
  const HostTensor& dy = *ctx.inputs[0];
  const HostTensor& x = *ctx.inputs[1];
  const RowSplit split = *SplitRows(ctx.node, ctx.attrs, x.type().shape);
  const int64_t rows = split.rows, n = split.n;
  const std::vector<float> scale = AsFloats(*ctx.inputs[2]), mean = AsFloats(*ctx.inputs[3]),
                           inv = AsFloats(*ctx.inputs[4]);
  const bool saturate = ctx.preset.fp16_saturation;
  const int64_t in_bytes = static_cast<int64_t>(ElementSize(dy.type().dtype) + ElementSize(x.type().dtype));
  const int64_t out_bytes = static_cast<int64_t>(ElementSize(dy.type().dtype));
  // dX, row by row.
  ForEachRowTile(ctx, rows, [&](int64_t begin, int64_t end, device::TileWork& w) {
    thread_local std::vector<float> g, v, res;
    g.resize(static_cast<size_t>(n)), v.resize(static_cast<size_t>(n)), res.resize(static_cast<size_t>(n));
    w.mte2_bytes += static_cast<uint64_t>(n * 4);  // scale stays in UB
    for (int64_t r = begin; r < end; ++r) {
      LoadAsFloat(dy, r * n, 1, n, g.data());
      LoadAsFloat(x, r * n, 1, n, v.data());
      float sum_g = 0.0f, sum_gx = 0.0f;
      for (int64_t i = 0; i < n; ++i) {
        v[i] = (v[i] - mean[r]) * inv[r];  // xhat
        g[i] *= scale[i];
        sum_g += g[i];
        sum_gx += g[i] * v[i];
      }
      const float mg = sum_g / static_cast<float>(n), mgx = sum_gx / static_cast<float>(n);
      for (int64_t i = 0; i < n; ++i) res[i] = inv[r] * (g[i] - mg - v[i] * mgx);
      w.overflow_elements += StoreFromFloat(ctx.outputs[0], r * n, n, res.data(), saturate);
      w += VectorChunkWork(n, n * in_bytes, n * out_bytes, 4, device::VectorPasses(device::VectorKernel::kLayerNormGradRow));
    }
  });
  std::vector<device::TileWork> dx_tiles = std::move(ctx.work.tiles);
  // dScale and dBias, column by column, rows summed in order.
  const bool want_params = ctx.outputs.size() > 1;
  std::vector<float> dscale(static_cast<size_t>(n), 0.0f), dbias(static_cast<size_t>(n), 0.0f);
  if (want_params) {
    ForEachRowTile(ctx, n, [&](int64_t begin, int64_t end, device::TileWork& w) {
      const int64_t cols = end - begin;
      thread_local std::vector<float> g, v;
      g.resize(static_cast<size_t>(cols)), v.resize(static_cast<size_t>(cols));
      for (int64_t r = 0; r < rows; ++r) {
        LoadAsFloat(dy, r * n + begin, 1, cols, g.data());
        LoadAsFloat(x, r * n + begin, 1, cols, v.data());
        for (int64_t j = 0; j < cols; ++j) {
          dscale[begin + j] += g[j] * ((v[j] - mean[r]) * inv[r]);
          dbias[begin + j] += g[j];
        }
        w += VectorChunkWork(cols, cols * in_bytes, 0, 4, device::VectorPasses(device::VectorKernel::kNormParamGrad));
      }
    });
    const int64_t p_bytes = static_cast<int64_t>(ElementSize(ctx.outputs[1].type().dtype));
    if (!ctx.work.tiles.empty()) {
      device::TileWork& w = ctx.work.tiles[0];
      w.overflow_elements += StoreFromFloat(ctx.outputs[1], 0, n, dscale.data(), saturate);
      if (ctx.outputs.size() > 2) w.overflow_elements += StoreFromFloat(ctx.outputs[2], 0, n, dbias.data(), saturate);
      w.mte3_bytes += static_cast<uint64_t>(2 * n * p_bytes);
    }
  }
  ctx.work.tiles.insert(ctx.work.tiles.begin(), dx_tiles.begin(), dx_tiles.end());
  return absl::OkStatus();
}

// ---- BatchNormalizationGrad -------------------------------------------------

absl::StatusOr<std::vector<TensorType>> InferBatchNormGrad(InferContext& c) {
  if (auto s = CheckFloatInputs(c); !s.ok()) return s;
  const TensorType& dy = *c.inputs[0];
  const TensorType& x = *c.inputs[1];
  if (x.shape.size() < 2) return NodeError(c.node, "input \"", c.node.inputs(1), "\" needs rank >= 2 (N, C, ...)");
  if (dy.shape != x.shape) {
    return NodeError(c.node, "the gradient ", ToString(dy), " and the input ", ToString(x), " differ in shape");
  }
  if (c.inputs[2]->elements() != x.shape[1]) {
    return NodeError(c.node, "scale ", ToString(*c.inputs[2]), " must have C = ", x.shape[1], " elements");
  }
  return std::vector<TensorType>{dy, *c.inputs[2], *c.inputs[2]};
}

absl::Status RunBatchNormGrad(RunContext& ctx) {
  const HostTensor& dy = *ctx.inputs[0];
  const HostTensor& x = *ctx.inputs[1];
  const float eps = ctx.attrs.Float("epsilon", 1e-5f).value_or(1e-5f);
  const Shape& s = x.type().shape;
  const int64_t n = s[0], channels = s[1];
  int64_t spatial = 1;
  for (size_t d = 2; d < s.size(); ++d) spatial *= s[d];
  const float m = static_cast<float>(n * spatial);
  const ChannelStats st = BatchChannelStats(x, eps);
  const std::vector<float> scale = AsFloats(*ctx.inputs[2]);
  std::vector<float> dscale(static_cast<size_t>(channels), 0.0f), dbias(static_cast<size_t>(channels), 0.0f);
  const bool saturate = ctx.preset.fp16_saturation;
  const int64_t in_bytes = static_cast<int64_t>(ElementSize(dy.type().dtype) + ElementSize(x.type().dtype));
  const int64_t out_bytes = static_cast<int64_t>(ElementSize(dy.type().dtype));
  ForEachRowTile(ctx, channels, [&](int64_t begin, int64_t end, device::TileWork& w) {
    thread_local std::vector<float> g, v;
    g.resize(static_cast<size_t>(spatial)), v.resize(static_cast<size_t>(spatial));
    for (int64_t c = begin; c < end; ++c) {
      const float mean = st.mean[c], inv = st.inv_std[c];
      float sum_g = 0.0f, sum_gx = 0.0f;
      for (int64_t i = 0; i < n; ++i) {
        const int64_t off = (i * channels + c) * spatial;
        LoadAsFloat(dy, off, 1, spatial, g.data());
        LoadAsFloat(x, off, 1, spatial, v.data());
        for (int64_t j = 0; j < spatial; ++j) {
          sum_g += g[j];
          sum_gx += g[j] * ((v[j] - mean) * inv);
        }
      }
      dbias[c] = sum_g;
      dscale[c] = sum_gx;
      const float k = scale[c] * inv, mg = sum_g / m, mgx = sum_gx / m;
      for (int64_t i = 0; i < n; ++i) {
        const int64_t off = (i * channels + c) * spatial;
        LoadAsFloat(dy, off, 1, spatial, g.data());
        LoadAsFloat(x, off, 1, spatial, v.data());
        for (int64_t j = 0; j < spatial; ++j) g[j] = k * (g[j] - mg - ((v[j] - mean) * inv) * mgx);
        w.overflow_elements += StoreFromFloat(ctx.outputs[0], off, spatial, g.data(), saturate);
        // dY and X are read twice: the sums, then the result.
        w += VectorChunkWork(spatial, 2 * spatial * in_bytes, spatial * out_bytes, 4, device::VectorPasses(device::VectorKernel::kBatchNormGrad));
      }
    }
  });
  if (!ctx.work.tiles.empty()) {
    device::TileWork& w = ctx.work.tiles[0];
    if (ctx.outputs.size() > 1) w.overflow_elements += StoreFromFloat(ctx.outputs[1], 0, channels, dscale.data(), saturate);
    if (ctx.outputs.size() > 2) w.overflow_elements += StoreFromFloat(ctx.outputs[2], 0, channels, dbias.data(), saturate);
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterNormGradOps(OpRegistry& r) {
  // The forward op's attributes, which the gradient rule copies.
  r.Register(WithAttributes(TrainingOpDef("LayerNormalizationGrad", 5, 5, 3, InferLayerNormGrad, RunLayerNormGrad),
                            {{"axis", AttrKind::kInt}, {"epsilon", AttrKind::kFloat}, {"stash_type", AttrKind::kInt}}));
  r.Register(WithAttributes(TrainingOpDef("BatchNormalizationGrad", 3, 3, 3, InferBatchNormGrad, RunBatchNormGrad),
                            {{"epsilon", AttrKind::kFloat},
                             {"momentum", AttrKind::kFloat},
                             {"training_mode", AttrKind::kInt},
                             {"spatial", AttrKind::kInt}}));
}

}  // namespace npu::graph::ops
