#include "server/graph/ops/batch_norm_training.h"

#include <cmath>

#include "server/device/vector_passes.h"
#include "server/graph/element_access.h"
#include "server/graph/ops/row_tiles.h"
#include "server/graph/vector_tiling.h"

namespace npu::graph::ops {
namespace {

struct Layout {
  int64_t n = 0, channels = 0, spatial = 1;
};

Layout LayoutOf(const Shape& s) {
  Layout l{s[0], s[1], 1};
  for (size_t d = 2; d < s.size(); ++d) l.spatial *= s[d];
  return l;
}

}  // namespace

ChannelStats BatchChannelStats(const HostTensor& x, float epsilon) {
  const Layout l = LayoutOf(x.type().shape);
  ChannelStats st;
  st.mean.assign(static_cast<size_t>(l.channels), 0.0f);
  st.var.assign(static_cast<size_t>(l.channels), 0.0f);
  st.inv_std.assign(static_cast<size_t>(l.channels), 0.0f);
  const int64_t count = l.n * l.spatial;
  std::vector<float> plane(static_cast<size_t>(l.spatial));
  for (int64_t c = 0; c < l.channels; ++c) {
    float sum = 0.0f;
    for (int64_t i = 0; i < l.n; ++i) {
      LoadAsFloat(x, (i * l.channels + c) * l.spatial, 1, l.spatial, plane.data());
      for (float v : plane) sum += v;
    }
    const float mean = count > 0 ? sum / static_cast<float>(count) : 0.0f;
    float sq = 0.0f;
    for (int64_t i = 0; i < l.n; ++i) {
      LoadAsFloat(x, (i * l.channels + c) * l.spatial, 1, l.spatial, plane.data());
      for (float v : plane) sq += (v - mean) * (v - mean);
    }
    st.mean[c] = mean;
    st.var[c] = count > 0 ? sq / static_cast<float>(count) : 0.0f;
    st.inv_std[c] = 1.0f / std::sqrt(st.var[c] + epsilon);
  }
  return st;
}

absl::Status RunBatchNormTraining(RunContext& ctx) {
  const HostTensor& x = *ctx.inputs[0];
  const HostTensor& out = ctx.outputs[0];
  const float eps = ctx.attrs.Float("epsilon", 1e-5f).value_or(1e-5f);
  const float momentum = ctx.attrs.Float("momentum", 0.9f).value_or(0.9f);
  const Layout l = LayoutOf(x.type().shape);
  const ChannelStats st = BatchChannelStats(x, eps);
  std::vector<float> scale(static_cast<size_t>(l.channels)), bias(scale.size());
  LoadAsFloat(*ctx.inputs[1], 0, 1, l.channels, scale.data());
  LoadAsFloat(*ctx.inputs[2], 0, 1, l.channels, bias.data());
  const int64_t bytes = static_cast<int64_t>(ElementSize(x.type().dtype));
  const bool saturate = ctx.preset.fp16_saturation;
  // One tile per channel range: the channel's planes are read for the two
  // statistics passes (sum; centred squares) and once more to normalise.
  ForEachRowTile(ctx, l.channels, [&](int64_t begin, int64_t end, device::TileWork& w) {
    thread_local std::vector<float> buf;
    buf.resize(static_cast<size_t>(l.spatial));
    for (int64_t c = begin; c < end; ++c) {
      const float a = scale[c] * st.inv_std[c], b = bias[c] - st.mean[c] * a;
      for (int64_t i = 0; i < l.n; ++i) {
        const int64_t off = (i * l.channels + c) * l.spatial;
        LoadAsFloat(x, off, 1, l.spatial, buf.data());
        for (float& v : buf) v = v * a + b;
        w.overflow_elements += StoreFromFloat(out, off, l.spatial, buf.data(), saturate);
        // The planes are read three times: the two statistics passes and the normalisation.
        w += VectorChunkWork(l.spatial, 3 * l.spatial * bytes, l.spatial * bytes, 4, device::VectorPasses(device::VectorKernel::kBatchNormTraining));
      }
    }
  });
  if (ctx.outputs.size() > 1) {
    std::vector<float> rm(static_cast<size_t>(l.channels)), rv(rm.size());
    LoadAsFloat(*ctx.inputs[3], 0, 1, l.channels, rm.data());
    LoadAsFloat(*ctx.inputs[4], 0, 1, l.channels, rv.data());
    for (int64_t c = 0; c < l.channels; ++c) {
      rm[c] = rm[c] * momentum + st.mean[c] * (1.0f - momentum);
      rv[c] = rv[c] * momentum + st.var[c] * (1.0f - momentum);
    }
    if (!ctx.work.tiles.empty()) {
      device::TileWork& w = ctx.work.tiles[0];
      w.overflow_elements += StoreFromFloat(ctx.outputs[1], 0, l.channels, rm.data(), saturate);
      w.overflow_elements += StoreFromFloat(ctx.outputs[2], 0, l.channels, rv.data(), saturate);
      w += VectorChunkWork(l.channels, 2 * l.channels * 4, 2 * l.channels * 4, 4, 2 * device::VectorPasses(device::VectorKernel::kScaleAndAdd));
    }
  }
  return absl::OkStatus();
}

}  // namespace npu::graph::ops
