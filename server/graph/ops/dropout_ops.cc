// Dropout in training: SeededDropout(data, ratio, seed) -> (output, mask) and
// its gradient DropoutGrad(dY, mask, ratio) -> dX. ONNX's Dropout takes its
// seed as an attribute, fixed when the graph is planned; a training step needs
// a new mask each step, so the seed is an input (INT64 scalar) here. Each
// element is kept when a counter-based hash of (seed, node name, index) is at
// least `ratio` (24 bits of it as a fraction), so a mask depends on nothing
// but those three: the same on every run, device and thread count. Kept
// elements are scaled by 1 / (1 - ratio), as ONNX and torch do.
#include <cstring>
#include <vector>

#include "server/device/vector_passes.h"
#include "server/graph/element_access.h"
#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/training_op_def.h"
#include "server/graph/ops/vector_chunks.h"

namespace npu::graph::ops {
namespace {

uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

uint64_t NameHash(const std::string& s) {  // FNV-1a
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

absl::Status CheckRatio(const v1::Node& node, float ratio) {
  if (ratio >= 0.0f && ratio < 1.0f) return absl::OkStatus();
  return NodeError(node, "ratio ", ratio, " must be in [0, 1)");
}

absl::StatusOr<float> ScalarFloat(const InferContext& c, int i) {
  const TensorType& t = *c.inputs[i];
  if (!IsFloat(t.dtype) || t.elements() != 1) {
    return NodeError(c.node, "input \"", c.node.inputs(i), "\" (ratio) must be one float, got ", ToString(t));
  }
  if (c.constants[i] == nullptr) return -1.0f;  // checked at run time
  float v = 0;
  LoadAsFloat(*c.constants[i], 0, 1, 1, &v);
  return v;
}

float RunScalar(const HostTensor& t) {
  float v = 0;
  LoadAsFloat(t, 0, 1, 1, &v);
  return v;
}

absl::StatusOr<std::vector<TensorType>> InferSeededDropout(InferContext& c) {
  const TensorType& x = *c.inputs[0];
  if (auto s = CheckFloatInputs(c, {0}); !s.ok()) return s;
  auto ratio = ScalarFloat(c, 1);
  if (!ratio.ok()) return ratio.status();
  if (c.constants[1] != nullptr) {
    if (auto s = CheckRatio(c.node, *ratio); !s.ok()) return s;
  }
  const TensorType& seed = *c.inputs[2];
  if ((seed.dtype != v1::INT64 && seed.dtype != v1::INT32) || seed.elements() != 1) {
    return NodeError(c.node, "input \"", c.node.inputs(2), "\" (seed) must be one INT64 or INT32, got ", ToString(seed));
  }
  return std::vector<TensorType>{x, {v1::BOOL, x.shape}};
}

absl::Status RunSeededDropout(RunContext& ctx) {
  const HostTensor& x = *ctx.inputs[0];
  const float ratio = RunScalar(*ctx.inputs[1]);
  if (auto s = CheckRatio(ctx.node, ratio); !s.ok()) return s;
  const HostTensor& seed_t = *ctx.inputs[2];
  const uint64_t seed = seed_t.type().dtype == v1::INT64 ? static_cast<uint64_t>(seed_t.as<int64_t>()[0])
                                                          : static_cast<uint64_t>(seed_t.as<int32_t>()[0]);
  const uint64_t stream = SplitMix64(seed ^ NameHash(ctx.node.name()));
  const HostTensor& out = ctx.outputs[0];
  uint8_t* mask = ctx.outputs.size() > 1 ? ctx.outputs[1].mutable_as<uint8_t>() : nullptr;
  const float scale = 1.0f / (1.0f - ratio);
  const BroadcastMap same(x.type().shape, out.type().shape);
  const bool saturate = ctx.preset.fp16_saturation;
  ForEachChunk(ctx, 3, device::VectorPasses(device::VectorKernel::kDropout), [&](int64_t s, int64_t len) {
    thread_local std::vector<float> xi, xo;
    const float* pi = ChunkAsFloat(x, same, s, len, xi);
    float* po = ScalarChunkOut(out, s, len, xo);
    for (int64_t i = 0; i < len; ++i) {
      const double u = static_cast<double>(SplitMix64(stream + static_cast<uint64_t>(s + i)) >> 40) * 0x1p-24;
      const bool keep = u >= ratio;
      if (mask != nullptr) mask[s + i] = keep;
      po[i] = keep ? pi[i] * scale : 0.0f;
    }
    return StoreScalarChunk(out, s, len, po, saturate);
  });
  if (mask != nullptr) {
    for (auto& w : ctx.work.tiles) w.mte3_bytes += ctx.outputs[1].bytes() / ctx.work.tiles.size();
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<TensorType>> InferDropoutGrad(InferContext& c) {
  const TensorType& dy = *c.inputs[0];
  const TensorType& mask = *c.inputs[1];
  if (auto s = CheckFloatInputs(c, {0}); !s.ok()) return s;
  if (mask.dtype != v1::BOOL || mask.shape != dy.shape) {
    return NodeError(c.node, "the mask \"", c.node.inputs(1), "\" must be BOOL of the gradient's shape ",
                     ShapeToString(dy.shape), ", got ", ToString(mask));
  }
  auto ratio = ScalarFloat(c, 2);
  if (!ratio.ok()) return ratio.status();
  if (c.constants[2] != nullptr) {
    if (auto s = CheckRatio(c.node, *ratio); !s.ok()) return s;
  }
  return std::vector<TensorType>{dy};
}

absl::Status RunDropoutGrad(RunContext& ctx) {
  const HostTensor& dy = *ctx.inputs[0];
  const uint8_t* mask = ctx.inputs[1]->as<uint8_t>();
  const float ratio = RunScalar(*ctx.inputs[2]);
  if (auto s = CheckRatio(ctx.node, ratio); !s.ok()) return s;
  const float scale = 1.0f / (1.0f - ratio);
  const HostTensor& out = ctx.outputs[0];
  const BroadcastMap same(dy.type().shape, out.type().shape);
  const bool saturate = ctx.preset.fp16_saturation;
  ForEachChunk(ctx, 3, device::VectorPasses(device::VectorKernel::kDropoutGrad), [&](int64_t s, int64_t len) {
    thread_local std::vector<float> xi, xo;
    const float* pi = ChunkAsFloat(dy, same, s, len, xi);
    float* po = ScalarChunkOut(out, s, len, xo);
    for (int64_t i = 0; i < len; ++i) po[i] = mask[s + i] ? pi[i] * scale : 0.0f;
    return StoreScalarChunk(out, s, len, po, saturate);
  });
  return absl::OkStatus();
}

}  // namespace

void RegisterDropoutOps(OpRegistry& r) {
  r.Register(TrainingOpDef("SeededDropout", 3, 3, 2, InferSeededDropout, RunSeededDropout, "Scalar, Vector, MTE2, MTE3"));
  r.Register(TrainingOpDef("DropoutGrad", 3, 3, 1, InferDropoutGrad, RunDropoutGrad));
}

}  // namespace npu::graph::ops
