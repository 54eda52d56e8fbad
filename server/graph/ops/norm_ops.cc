// LayerNormalization (axis, epsilon; optional Mean and InvStdDev outputs),
// InstanceNormalization, GroupNormalization and BatchNormalization (inference:
// running statistics) on the Vector unit, in fp32 with the result rounded once.
// Statistics are one Welford pass (kernels/vector_kernels.h), then one
// normalising pass.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/vector_kernels.h"
#include "server/device/vector_passes.h"
#include "server/graph/element_access.h"
#include "server/graph/node_error.h"
#include "server/graph/ops/batch_norm_training.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/shape_args.h"
#include "server/graph/ops/vector_chunks.h"
#include "server/graph/shape_math.h"
#include "server/graph/vector_tiling.h"

namespace npu::graph::ops {
namespace {

absl::Status CheckFloat(const InferContext& c, int i) {
  if (IsFloat(c.inputs[i]->dtype)) return absl::OkStatus();
  return NodeError(c.node, InputLabel(c.node, i), ": dtype ", DataTypeName(c.inputs[i]->dtype),
                   " is not supported (FLOAT16, FLOAT32)");
}

// ---- LayerNormalization ----------------------------------------------------

absl::StatusOr<std::vector<TensorType>> InferLayerNorm(InferContext& c) {
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

// LayerNormalization's scale or bias as an fp32 operand: the tensor itself,
// or an fp16 one widened (exactly) once into `storage` rather than in every
// row; 64-byte aligned like tensors, since every row loads it a vector at a
// time (a misaligned copy cost fp32 rows 10-20%).
kernels::VecSrc WidenedOnce(const HostTensor& t, std::vector<float>& storage) {
  if (t.type().dtype != v1::FLOAT16) return SrcAt(t, 0);
  const int64_t n = t.type().elements();
  storage.resize(static_cast<size_t>(n) + 16);
  const size_t skew = reinterpret_cast<uintptr_t>(storage.data()) % 64;
  float* aligned = storage.data() + (skew == 0 ? 0 : (64 - skew) / sizeof(float));
  LoadAsFloat(t, 0, 1, n, aligned);
  return kernels::F32Src(aligned);
}

// 1 / sqrt(m2 / n + eps), in double, rounded once.
float InvStd(const kernels::Moments& m, int64_t n, float eps) {
  return static_cast<float>(1.0 / std::sqrt(m.m2 / static_cast<double>(n) + static_cast<double>(eps)));
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
  std::vector<float> scale_storage, bias_storage;
  const kernels::VecSrc scale = WidenedOnce(*ctx.inputs[1], scale_storage);
  const bool has_bias = ctx.inputs.size() > 2 && ctx.inputs[2] != nullptr;
  const kernels::VecSrc bias = has_bias ? WidenedOnce(*ctx.inputs[2], bias_storage) : kernels::VecSrc{};
  float* mean_out = ctx.outputs.size() > 1 ? ctx.outputs[1].mutable_as<float>() : nullptr;
  float* inv_out = ctx.outputs.size() > 2 ? ctx.outputs[2].mutable_as<float>() : nullptr;
  const int64_t bytes = static_cast<int64_t>(ElementSize(x.type().dtype));
  const bool saturate = ctx.preset.fp16_saturation;
  const kernels::VectorKernelSet& k = kernels::VectorKernels();
  ForEachUnitTile(ctx, rows, [&](device::TileWork& w, int64_t r0, int64_t r1) {
    w.mte2_bytes += static_cast<uint64_t>(n * bytes * (has_bias ? 2 : 1));  // gamma/beta stay in UB
    for (int64_t r = r0; r < r1; ++r) {
      const kernels::Moments m = k.moments(SrcAt(x, r * n), static_cast<size_t>(n));
      const float mean = static_cast<float>(m.mean), inv_std = InvStd(m, n, eps);
      w.overflow_elements += k.normalize(SrcAt(x, r * n), DstAt(out, r * n), static_cast<size_t>(n), mean, inv_std,
                                         scale, bias, saturate);
      if (mean_out != nullptr) mean_out[r] = mean;
      if (inv_out != nullptr) inv_out[r] = inv_std;
      // Welford statistics, then centre, scale, affine (vector_passes.h), in fp32 lanes as CANN normalises.
      w += VectorChunkWork(n, n * bytes, n * bytes, 4, device::VectorPasses(device::VectorKernel::kLayerNormRow));
    }
  });
  return absl::OkStatus();
}

// ---- InstanceNormalization, GroupNormalization ----------------------------------

// x [N, C, ...] normalised over each group of C / groups channels (all spatial
// positions); scale and bias per channel, or (GroupNormalization opset 18) per
// group. InstanceNormalization is groups = C.
struct GroupNormShape {
  int64_t n = 0, c = 0, spatial = 1, groups = 1;
  bool per_group_affine = false;
};

absl::StatusOr<GroupNormShape> GroupNormOf(const InferContext& c, int64_t groups) {
  const TensorType& x = *c.inputs[0];
  if (x.shape.size() < 2) return NodeError(c.node, InputLabel(c.node, 0), " needs rank >= 2 (N, C, ...)");
  const absl::Span<const int64_t> dims(x.shape);
  auto spatial = CheckedElements(dims.subspan(2), "the spatial dims");
  if (!spatial.ok()) return AtNode(c.node, spatial.status());
  // torch normalises no empty group: statistics of no elements are undefined.
  if (x.shape[1] == 0 || *spatial == 0) {
    return NodeError(c.node, InputLabel(c.node, 0), " ", ToString(x),
                     ": only the batch dimension may be 0 (channels and spatial dims need >= 1)");
  }
  GroupNormShape g{x.shape[0], x.shape[1], *spatial, groups < 0 ? x.shape[1] : groups};
  if (g.c % g.groups != 0) {
    return NodeError(c.node, "attribute \"num_groups\" = ", g.groups, " must divide the ", g.c, " channels");
  }
  for (int i = 1; i < 3; ++i) {
    const int64_t e = c.inputs[i]->elements();
    if (e == g.c) continue;
    if (groups >= 0 && e == g.groups) {
      g.per_group_affine = true;
      continue;
    }
    return NodeError(c.node, InputLabel(c.node, i), " ", ToString(*c.inputs[i]), " must have C = ", g.c,
                     groups >= 0 ? absl::StrCat(" (or num_groups = ", g.groups, ")") : std::string(), " elements");
  }
  return g;
}

absl::StatusOr<std::vector<TensorType>> InferGroupNorm(InferContext& c, bool instance) {
  for (int i = 0; i < 3; ++i) {
    if (auto s = CheckFloat(c, i); !s.ok()) return s;
  }
  int64_t groups = -1;
  if (!instance) {
    auto g = c.attrs.Int("num_groups", -1);
    if (!g.ok()) return g.status();
    if (*g < 1) return NodeError(c.node, "attribute \"num_groups\" is required and must be >= 1");
    groups = *g;
  }
  if (auto g = GroupNormOf(c, groups); !g.ok()) return g.status();
  return std::vector<TensorType>{*c.inputs[0]};
}

absl::Status RunGroupNorm(RunContext& ctx, bool instance) {
  const HostTensor& x = *ctx.inputs[0];
  const HostTensor& out = ctx.outputs[0];
  const Shape& s = x.type().shape;
  int64_t spatial = 1;
  for (size_t d = 2; d < s.size(); ++d) spatial *= s[d];
  const int64_t channels = s[1];
  const int64_t groups = instance ? channels : ctx.attrs.Int("num_groups", 1).value_or(1);
  const int64_t per_group = channels / groups, span = per_group * spatial;
  const bool per_group_affine = !instance && ctx.inputs[1]->type().elements() != channels;
  const float eps = ctx.attrs.Float("epsilon", 1e-5f).value_or(1e-5f);
  const std::vector<float> scale = AsFloats(*ctx.inputs[1]), bias = AsFloats(*ctx.inputs[2]);
  const int64_t units = s[0] * groups;
  if (units == 0 || span == 0) return absl::OkStatus();
  const int64_t bytes = static_cast<int64_t>(ElementSize(x.type().dtype));
  const bool saturate = ctx.preset.fp16_saturation;
  const kernels::VectorKernelSet& k = kernels::VectorKernels();
  ForEachUnitTile(ctx, units, [&](device::TileWork& w, int64_t u0, int64_t u1) {
    for (int64_t u = u0; u < u1; ++u) {
      const int64_t g = u % groups, base = u * span;
      const kernels::Moments m = k.moments(SrcAt(x, base), static_cast<size_t>(span));
      const float mean = static_cast<float>(m.mean), inv_std = InvStd(m, span, eps);
      for (int64_t ci = 0; ci < per_group; ++ci) {
        const int64_t c = g * per_group + ci, a = per_group_affine ? g : c;
        const int64_t off = base + ci * spatial;
        w.overflow_elements += k.normalize(SrcAt(x, off), DstAt(out, off), static_cast<size_t>(spatial), mean,
                                           inv_std, {&scale[a], kernels::Storage::kF32, true},
                                           {&bias[a], kernels::Storage::kF32, true}, saturate);
      }
      w += VectorChunkWork(span, span * bytes, span * bytes, 4,
                           device::VectorPasses(device::VectorKernel::kLayerNormRow));  // as LayerNorm
    }
  });
  return absl::OkStatus();
}

// ---- BatchNormalization (inference) ----------------------------------------

bool TrainingMode(const NodeAttributes& attrs) { return attrs.Int("training_mode", 0).value_or(0) != 0; }

// Inference here; training mode (training_mode = 1) runs in batch_norm_training.cc.
absl::StatusOr<std::vector<TensorType>> InferBatchNorm(InferContext& c) {
  auto training = c.attrs.Int("training_mode", 0);
  if (!training.ok()) return training.status();
  if (*training != 0 && *training != 1) {
    return NodeError(c.node, "attribute \"training_mode\" must be 0 or 1, got ", *training);
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
  if (*training == 0) {
    if (c.node.outputs_size() > 1) {
      return NodeError(c.node, "outputs running_mean and running_var exist only in training mode (training_mode = 1)");
    }
    return std::vector<TensorType>{x};
  }
  if (c.node.outputs_size() == 2) {
    return NodeError(c.node, "in training mode the outputs are Y, running_mean and running_var (1 or 3 of them)");
  }
  return std::vector<TensorType>{x, *c.inputs[3], *c.inputs[4]};
}

absl::Status RunBatchNorm(RunContext& ctx) {
  if (TrainingMode(ctx.attrs)) return RunBatchNormTraining(ctx);
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
  // Folded per channel into y = fma(x, a, b): two Vector passes per plane.
  std::vector<float> a(static_cast<size_t>(channels)), b(static_cast<size_t>(channels));
  for (int64_t c = 0; c < channels; ++c) {
    a[c] = scale[c] / std::sqrt(var[c] + eps);
    b[c] = bias[c] - mean[c] * a[c];
  }
  if (planes == 0 || spatial == 0) return absl::OkStatus();
  const int64_t bytes = static_cast<int64_t>(ElementSize(x.type().dtype));
  const bool saturate = ctx.preset.fp16_saturation;
  const kernels::VectorKernelSet& k = kernels::VectorKernels();
  ForEachUnitTile(ctx, planes, [&](device::TileWork& w, int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t c = p % channels;
      w.overflow_elements += k.affine(SrcAt(x, p * spatial), DstAt(out, p * spatial), static_cast<size_t>(spatial),
                                      a[c], b[c], saturate);
      w += VectorChunkWork(spatial, spatial * bytes, spatial * bytes, bytes,
                           device::VectorPasses(device::VectorKernel::kBatchNormAffine));
    }
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
  ln.attributes = {{"axis", AttrKind::kInt}, {"epsilon", AttrKind::kFloat}, {"stash_type", AttrKind::kInt}};
  ln.infer = InferLayerNorm;
  ln.run = RunLayerNorm;
  r.Register(std::move(ln));
  OpDef bn;
  bn.name = "BatchNormalization";
  bn.units = "Vector, MTE2, MTE3";
  bn.task_type = device::TaskType::kAiVectorCore;
  bn.dtypes = {v1::FLOAT16, v1::FLOAT32};
  bn.min_inputs = bn.max_inputs = 5;
  bn.attributes = {{"epsilon", AttrKind::kFloat},
                   {"momentum", AttrKind::kFloat},
                   {"training_mode", AttrKind::kInt},
                   {"spatial", AttrKind::kInt}};
  bn.num_outputs = 3;
  bn.infer = InferBatchNorm;
  bn.run = RunBatchNorm;
  r.Register(std::move(bn));
  for (bool instance : {true, false}) {
    OpDef g;
    g.name = instance ? "InstanceNormalization" : "GroupNormalization";
    g.units = "Vector, MTE2, MTE3";
    g.task_type = device::TaskType::kAiVectorCore;
    g.dtypes = {v1::FLOAT16, v1::FLOAT32};
    g.min_inputs = g.max_inputs = 3;
    g.attributes = {{"epsilon", AttrKind::kFloat}};
    if (!instance) {
      g.attributes.push_back({"num_groups", AttrKind::kInt});
      g.attributes.push_back({"stash_type", AttrKind::kInt});
    }
    g.infer = [instance](InferContext& c) { return InferGroupNorm(c, instance); };
    g.run = [instance](RunContext& c) { return RunGroupNorm(c, instance); };
    r.Register(std::move(g));
  }
}

}  // namespace npu::graph::ops
