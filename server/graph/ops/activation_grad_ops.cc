// Gradients of the activations, as Vector elementwise ops over (dY, Y) or
// (dY, X) in fp32, rounded once to dY's type: ReluGrad(dY, Y), SigmoidGrad(dY,
// Y), TanhGrad(dY, Y), LeakyReluGrad(dY, X; alpha), GeluGrad(dY, X;
// approximate). Names and operand order follow ONNX Runtime's training ops.
#include <cmath>
#include <vector>

#include "server/device/vector_passes.h"
#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/training_op_def.h"
#include "server/graph/ops/vector_chunks.h"

namespace npu::graph::ops {
namespace {

enum class Grad { kRelu, kSigmoid, kTanh, kLeakyRelu, kGeluErf, kGeluTanh };

struct GradParams {
  Grad kind;
  float alpha = 0.01f;
};

constexpr float kInvSqrt2 = 0.70710678118654752f;
constexpr float kInvSqrt2Pi = 0.39894228040143268f;
constexpr float kSqrt2OverPi = 0.79788456080286536f;

// dX for one element from dy and the saved value v (Y or X, per op).
inline float GradOf(const GradParams& p, float dy, float v) {
  switch (p.kind) {
    case Grad::kRelu: return v > 0.0f ? dy : 0.0f;
    case Grad::kSigmoid: return dy * (v * (1.0f - v));
    // (1 - y)(1 + y), not 1 - y*y: near |y| = 1 the square's rounding would be
    // all that is left of the difference.
    case Grad::kTanh: return dy * ((1.0f - v) * (1.0f + v));
    case Grad::kLeakyRelu: return v > 0.0f ? dy : dy * p.alpha;
    case Grad::kGeluErf: {
      // d/dx x*Phi(x) = Phi(x) + x*phi(x)
      const float cdf = 0.5f * (1.0f + std::erf(v * kInvSqrt2));
      const float pdf = kInvSqrt2Pi * std::exp(-0.5f * v * v);
      return dy * (cdf + v * pdf);
    }
    case Grad::kGeluTanh: {
      const float inner = kSqrt2OverPi * (v + 0.044715f * v * v * v);
      const float t = std::tanh(inner);
      const float dinner = kSqrt2OverPi * (1.0f + 3.0f * 0.044715f * v * v);
      return dy * (0.5f * (1.0f + t) + 0.5f * v * (1.0f - t * t) * dinner);
    }
  }
  return 0.0f;
}

device::VectorKernel KernelOf(Grad g) {
  switch (g) {
    case Grad::kRelu: return device::VectorKernel::kReluGrad;
    case Grad::kSigmoid: return device::VectorKernel::kSigmoidGrad;
    case Grad::kTanh: return device::VectorKernel::kTanhGrad;
    case Grad::kLeakyRelu: return device::VectorKernel::kLeakyReluGrad;
    case Grad::kGeluErf: return device::VectorKernel::kGeluErfGrad;
    case Grad::kGeluTanh: return device::VectorKernel::kGeluTanhGrad;
  }
  return device::VectorKernel::kReluGrad;
}

const char* OpName(Grad g) {
  switch (g) {
    case Grad::kRelu: return "ReluGrad";
    case Grad::kSigmoid: return "SigmoidGrad";
    case Grad::kTanh: return "TanhGrad";
    case Grad::kLeakyRelu: return "LeakyReluGrad";
    case Grad::kGeluErf: case Grad::kGeluTanh: return "GeluGrad";
  }
  return "";
}

absl::StatusOr<GradParams> ParamsOf(Grad kind, const NodeAttributes& attrs) {
  GradParams p{kind};
  if (kind == Grad::kLeakyRelu) {
    auto alpha = attrs.Float("alpha", 0.01f);
    if (!alpha.ok()) return alpha.status();
    p.alpha = *alpha;
  } else if (kind == Grad::kGeluErf) {
    auto approx = attrs.String("approximate", "none");
    if (!approx.ok()) return approx.status();
    if (*approx == "tanh") p.kind = Grad::kGeluTanh;
  }
  return p;
}

absl::StatusOr<std::vector<TensorType>> InferGrad(InferContext& c, Grad kind) {
  if (auto p = ParamsOf(kind, c.attrs); !p.ok()) return p.status();
  if (auto s = CheckFloatInputs(c); !s.ok()) return s;
  const TensorType& dy = *c.inputs[0];
  const TensorType& v = *c.inputs[1];
  if (dy.shape != v.shape) {
    return NodeError(c.node, "the gradient \"", c.node.inputs(0), "\" ", ToString(dy), " and \"", c.node.inputs(1),
                     "\" ", ToString(v), " differ in shape");
  }
  return std::vector<TensorType>{dy};
}

absl::Status RunGrad(RunContext& ctx, Grad kind) {
  const GradParams p = *ParamsOf(kind, ctx.attrs);
  const HostTensor& dy = *ctx.inputs[0];
  const HostTensor& v = *ctx.inputs[1];
  const HostTensor& out = ctx.outputs[0];
  const BroadcastMap same(dy.type().shape, out.type().shape);
  const bool saturate = ctx.preset.fp16_saturation;
  ForEachChunk(ctx, 3, device::VectorPasses(KernelOf(p.kind)), [&](int64_t s, int64_t len) {
    thread_local std::vector<float> xd, xv, xo;
    const float* pd = ChunkAsFloat(dy, same, s, len, xd);
    const float* pv = ChunkAsFloat(v, same, s, len, xv);
    float* po = ScalarChunkOut(out, s, len, xo);
    for (int64_t i = 0; i < len; ++i) po[i] = GradOf(p, pd[i], pv[i]);
    return StoreScalarChunk(out, s, len, po, saturate);
  });
  return absl::OkStatus();
}

}  // namespace

void RegisterActivationGradOps(OpRegistry& r) {
  for (Grad g : {Grad::kRelu, Grad::kSigmoid, Grad::kTanh, Grad::kLeakyRelu, Grad::kGeluErf}) {
    std::vector<AttrDef> attributes;
    if (g == Grad::kLeakyRelu) attributes = {{"alpha", AttrKind::kFloat}};
    if (g == Grad::kGeluErf) attributes = {{"approximate", AttrKind::kString, {"none", "tanh"}}};
    r.Register(WithAttributes(TrainingOpDef(
                                  OpName(g), 2, 2, 1, [g](InferContext& c) { return InferGrad(c, g); },
                                  [g](RunContext& c) { return RunGrad(c, g); }),
                              std::move(attributes)));
  }
}

}  // namespace npu::graph::ops
