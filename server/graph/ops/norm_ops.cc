// LayerNormalization (axis, epsilon; optional Mean and InvStdDev outputs) and
// BatchNormalization (inference: running statistics) on the Vector unit, in
// fp32 with the result rounded once.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/vector_math.h"
#include "kernels/vector_rows.h"
#include "server/device/vector_passes.h"
#include "server/graph/element_access.h"
#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/parallel_for.h"
#include "server/graph/ops/shape_args.h"
#include "server/graph/shape_math.h"
#include "server/graph/vector_tiling.h"

namespace npu::graph::ops {
namespace {

absl::Status CheckFloat(const InferContext& c, int i) {
  if (IsFloat(c.inputs[i]->dtype)) return absl::OkStatus();
  return NodeError(c.node, InputLabel(c.node, i), ": dtype ", DataTypeName(c.inputs[i]->dtype),
                   " is not supported (FLOAT16, FLOAT32)");
}

std::vector<float> AsFloats(const HostTensor& t) {
  std::vector<float> v(static_cast<size_t>(t.type().elements()));
  LoadAsFloat(t, 0, 1, t.type().elements(), v.data());
  return v;
}

// ---- LayerNormalization ----------------------------------------------------

absl::StatusOr<std::vector<TensorType>> InferLayerNorm(InferContext& c) {
  if (auto s = c.attrs.CheckKnown({"axis", "epsilon", "stash_type"}); !s.ok()) return s;
  const TensorType& x = *c.inputs[0];
  for (int i = 0; i < static_cast<int>(c.inputs.size()); ++i) {
    if (c.inputs[i] == nullptr) continue;
    if (auto s = CheckFloat(c, i); !s.ok()) return s;
  }
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  auto attr = c.attrs.Int("axis", -1);
  if (!attr.ok()) return attr.status();
  auto axis = NormalizeAxis(c.node, *attr, rank);
  if (!axis.ok()) return axis.status();
  const absl::Span<const int64_t> dims(x.shape);
  auto normalised = CheckedElements(dims.subspan(*axis), "the normalised dims");
  if (!normalised.ok()) return AtNode(c.node, normalised.status());
  const int64_t n = *normalised;
  auto rows = CheckedElements(dims.subspan(0, *axis), "the rows");
  if (!rows.ok()) return AtNode(c.node, rows.status());
  if (n == 0 && *rows > 0 && c.node.outputs_size() > 1) {
    return NodeError(c.node, "the normalised dims of ", ToString(x),
                     " are empty: the Mean and InvStdDev outputs of no elements are undefined");
  }
  for (int i = 1; i < static_cast<int>(c.inputs.size()); ++i) {
    if (c.inputs[i] != nullptr && c.inputs[i]->elements() != n) {
      return NodeError(c.node, InputLabel(c.node, i), " ", ToString(*c.inputs[i]), " must have ", n,
                       " elements (the normalised dims of ", ToString(x), ")");
    }
  }
  Shape stats(x.shape.begin(), x.shape.begin() + *axis);
  stats.resize(static_cast<size_t>(rank), 1);
  return std::vector<TensorType>{x, {v1::FLOAT32, stats}, {v1::FLOAT32, stats}};
}

absl::Status RunLayerNorm(RunContext& ctx) {
  const HostTensor& x = *ctx.inputs[0];
  const HostTensor& out = ctx.outputs[0];
  const int64_t rank = static_cast<int64_t>(x.type().shape.size());
  const int64_t axis = *NormalizeAxis(ctx.node, ctx.attrs.Int("axis", -1).value(), rank);
  const float eps = ctx.attrs.Float("epsilon", 1e-5f).value_or(1e-5f);
  int64_t n = 1;
  for (int64_t d = axis; d < rank; ++d) n *= x.type().shape[d];
  const int64_t rows = n == 0 ? 0 : x.type().elements() / n;
  if (rows == 0) return absl::OkStatus();
  const std::vector<float> scale = AsFloats(*ctx.inputs[1]);
  const bool has_bias = ctx.inputs.size() > 2 && ctx.inputs[2] != nullptr;
  const std::vector<float> bias = has_bias ? AsFloats(*ctx.inputs[2]) : std::vector<float>{};
  float* mean_out = ctx.outputs.size() > 1 ? ctx.outputs[1].mutable_as<float>() : nullptr;
  float* inv_out = ctx.outputs.size() > 2 ? ctx.outputs[2].mutable_as<float>() : nullptr;
  const int64_t tiles = std::min<int64_t>(rows, ctx.preset.vector_unit_cores());
  ctx.work.tiles.assign(static_cast<size_t>(tiles), device::TileWork{});
  const int64_t bytes = static_cast<int64_t>(ElementSize(x.type().dtype));
  const bool saturate = ctx.preset.fp16_saturation;
  const bool fp32 = x.type().dtype == v1::FLOAT32;
  ParallelFor(tiles, [&](int64_t t) {
    device::TileWork& w = ctx.work.tiles[static_cast<size_t>(t)];
    w.pipeline_steps = 0;
    w.mte2_bytes += static_cast<uint64_t>(n * bytes * (has_bias ? 2 : 1));  // gamma/beta stay in UB
    thread_local std::vector<float> row, res;
    row.resize(static_cast<size_t>(n));
    res.resize(static_cast<size_t>(n));
    for (int64_t r = rows * t / tiles; r < rows * (t + 1) / tiles; ++r) {
      const float* in = fp32 ? x.as<float>() + r * n : row.data();
      if (!fp32) LoadAsFloat(x, r * n, 1, n, row.data());
      float* o = fp32 ? out.mutable_as<float>() + r * n : res.data();
      kernels::LayerNormRowF32(in, scale.data(), has_bias ? bias.data() : nullptr, eps, o, static_cast<size_t>(n),
                               mean_out ? mean_out + r : nullptr, inv_out ? inv_out + r : nullptr);
      if (!fp32) StoreFromFloat(out, r * n, n, o, saturate);
      // sum, centre + square + sum, scale, affine (vector_passes.h), in fp32 lanes as CANN normalises.
      w += VectorChunkWork(n, n * bytes, n * bytes, 4, device::VectorPasses(device::VectorKernel::kLayerNormRow));
    }
    w.pipeline_steps = std::max<uint64_t>(1, w.pipeline_steps);
  });
  return absl::OkStatus();
}

// ---- BatchNormalization (inference) ----------------------------------------

absl::StatusOr<std::vector<TensorType>> InferBatchNorm(InferContext& c) {
  if (auto s = c.attrs.CheckKnown({"epsilon", "momentum", "training_mode", "spatial"}); !s.ok()) return s;
  if (c.attrs.Int("training_mode", 0).value_or(1) != 0) {
    return NodeError(c.node, "attribute \"training_mode\" must be 0: only inference is supported");
  }
  if (c.attrs.Int("spatial", 1).value_or(0) != 1) {
    return NodeError(c.node, "attribute \"spatial\" must be 1");
  }
  const TensorType& x = *c.inputs[0];
  if (x.shape.size() < 2) return NodeError(c.node, InputLabel(c.node, 0), " needs rank >= 2 (N, C, ...)");
  for (int i = 0; i < 5; ++i) {
    if (auto s = CheckFloat(c, i); !s.ok()) return s;
    if (i > 0 && c.inputs[i]->elements() != x.shape[1]) {
      return NodeError(c.node, InputLabel(c.node, i), " ", ToString(*c.inputs[i]), " must have C = ",
                       x.shape[1], " elements");
    }
  }
  return std::vector<TensorType>{x};
}

absl::Status RunBatchNorm(RunContext& ctx) {
  const HostTensor& x = *ctx.inputs[0];
  const HostTensor& out = ctx.outputs[0];
  const float eps = ctx.attrs.Float("epsilon", 1e-5f).value_or(1e-5f);
  const std::vector<float> scale = AsFloats(*ctx.inputs[1]), bias = AsFloats(*ctx.inputs[2]),
                           mean = AsFloats(*ctx.inputs[3]), var = AsFloats(*ctx.inputs[4]);
  const Shape& s = x.type().shape;
  const int64_t channels = s[1];
  int64_t spatial = 1;
  for (size_t d = 2; d < s.size(); ++d) spatial *= s[d];
  const int64_t planes = s[0] * channels;
  // Folded per channel into y = x * a + b: two Vector passes per plane.
  std::vector<float> a(static_cast<size_t>(channels)), b(static_cast<size_t>(channels));
  for (int64_t c = 0; c < channels; ++c) {
    a[c] = scale[c] / std::sqrt(var[c] + eps);
    b[c] = bias[c] - mean[c] * a[c];
  }
  if (planes == 0 || spatial == 0) return absl::OkStatus();
  const int64_t tiles = std::min<int64_t>(planes, ctx.preset.vector_unit_cores());
  ctx.work.tiles.assign(static_cast<size_t>(tiles), device::TileWork{});
  const int64_t bytes = static_cast<int64_t>(ElementSize(x.type().dtype));
  const bool saturate = ctx.preset.fp16_saturation;
  ParallelFor(tiles, [&](int64_t t) {
    device::TileWork& w = ctx.work.tiles[static_cast<size_t>(t)];
    w.pipeline_steps = 0;
    thread_local std::vector<float> buf;
    buf.resize(static_cast<size_t>(spatial));
    for (int64_t p = planes * t / tiles; p < planes * (t + 1) / tiles; ++p) {
      const int64_t c = p % channels;
      LoadAsFloat(x, p * spatial, 1, spatial, buf.data());
      const float ac = a[c], bc = b[c];
      for (float& v : buf) v = v * ac + bc;
      StoreFromFloat(out, p * spatial, spatial, buf.data(), saturate);
      w += VectorChunkWork(spatial, spatial * bytes, spatial * bytes, bytes,
                           device::VectorPasses(device::VectorKernel::kBatchNormAffine));
    }
    w.pipeline_steps = std::max<uint64_t>(1, w.pipeline_steps);
  });
  return absl::OkStatus();
}

}  // namespace

void RegisterNormOps(OpRegistry& r) {
  OpDef ln;
  ln.name = "LayerNormalization";
  ln.units = "Vector, MTE2, MTE3";
  ln.task_type = device::TaskType::kAiVectorCore;
  ln.dtypes = {v1::FLOAT16, v1::FLOAT32};
  ln.min_inputs = 2;
  ln.max_inputs = 3;
  ln.num_outputs = 3;
  ln.infer = InferLayerNorm;
  ln.run = RunLayerNorm;
  r.Register(std::move(ln));
  OpDef bn;
  bn.name = "BatchNormalization";
  bn.units = "Vector, MTE2, MTE3";
  bn.task_type = device::TaskType::kAiVectorCore;
  bn.dtypes = {v1::FLOAT16, v1::FLOAT32};
  bn.min_inputs = bn.max_inputs = 5;
  bn.infer = InferBatchNorm;
  bn.run = RunBatchNorm;
  r.Register(std::move(bn));
}

}  // namespace npu::graph::ops
