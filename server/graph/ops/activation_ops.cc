// Vector unary ops: Relu, Neg, Abs, Sqrt, Reciprocal, Exp, Log, Erf, Sigmoid,
// Tanh, Sin, Cos, Silu, Gelu, LeakyRelu, HardSigmoid, Clip, Floor, Ceil, Round,
// Sign, HardSwish, Softplus, Mish, Elu, Selu and Celu, on the Vector
// kernels (kernels/vector_kernels.h): computed in fp32, rounded once to the
// output type, overflows counted. Each counts the Vector passes of its kernel
// (server/device/vector_passes.h: exp/ln/erf are multi-instruction sequences).
#include <limits>
#include <vector>

#include "kernels/vector_kernels.h"
#include "kernels/vector_math.h"
#include "server/device/vector_passes.h"
#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/vector_chunks.h"

namespace npu::graph::ops {
namespace {

using kernels::UnaryOp;
using kernels::UnaryParams;

absl::Status CheckFloatInput(const InferContext& c, int i) {
  if (IsFloat(c.inputs[i]->dtype)) return absl::OkStatus();
  return NodeError(c.node, InputLabel(c.node, i), ": dtype ", DataTypeName(c.inputs[i]->dtype),
                   " is not supported (FLOAT16, FLOAT32)");
}

// The op's parameters from its attributes (validated at plan time, read again
// at run time: cheap, and keeps the OpDef stateless).
absl::StatusOr<UnaryParams> ParamsFor(UnaryOp op, const NodeAttributes& attrs) {
  UnaryParams p;
  if (op == UnaryOp::kLeakyRelu) {
    auto alpha = attrs.Float("alpha", 0.01f);
    if (!alpha.ok()) return alpha.status();
    p.alpha = *alpha;
  } else if (op == UnaryOp::kHardSigmoid) {
    auto alpha = attrs.Float("alpha", 0.2f);
    if (!alpha.ok()) return alpha.status();
    auto beta = attrs.Float("beta", 0.5f);
    if (!beta.ok()) return beta.status();
    p.alpha = *alpha;
    p.beta = *beta;
  } else if (op == UnaryOp::kElu || op == UnaryOp::kCelu) {
    auto alpha = attrs.Float("alpha", 1.0f);
    if (!alpha.ok()) return alpha.status();
    p.alpha = *alpha;
    p.beta = static_cast<float>(1.0 / static_cast<double>(*alpha));  // Celu's input scale, as torch rounds it
  } else if (op == UnaryOp::kSelu) {
    // ONNX's defaults are torch's constants rounded to float.
    auto alpha = attrs.Float("alpha", 1.67326319217681884765625f);
    if (!alpha.ok()) return alpha.status();
    auto gamma = attrs.Float("gamma", 1.05070102214813232421875f);
    if (!gamma.ok()) return gamma.status();
    p.alpha = *alpha * *gamma;  // torch's negative coefficient, one fp32 product
    p.beta = *gamma;
  }
  return p;
}

std::vector<AttrDef> AttributesOf(UnaryOp op) {
  switch (op) {
    case UnaryOp::kLeakyRelu: return {{"alpha", AttrKind::kFloat}};
    case UnaryOp::kHardSigmoid: return {{"alpha", AttrKind::kFloat}, {"beta", AttrKind::kFloat}};
    case UnaryOp::kGeluErf: return {{"approximate", AttrKind::kString, {"none", "tanh"}}};
    case UnaryOp::kElu:
    case UnaryOp::kCelu: return {{"alpha", AttrKind::kFloat}};
    case UnaryOp::kSelu: return {{"alpha", AttrKind::kFloat}, {"gamma", AttrKind::kFloat}};
    default: return {};
  }
}

absl::StatusOr<std::vector<TensorType>> InferUnary(InferContext& c, UnaryOp op) {
  if (auto p = ParamsFor(op, c.attrs); !p.ok()) return p.status();
  if (op == UnaryOp::kCelu && c.attrs.Float("alpha", 1.0f).value_or(1.0f) == 0.0f) {
    return NodeError(c.node, "attribute \"alpha\" = 0: Celu divides by it");
  }
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (c.inputs[i] == nullptr) continue;
    if (auto s = CheckFloatInput(c, static_cast<int>(i)); !s.ok()) return s;
  }
  for (size_t i = 1; i < c.inputs.size(); ++i) {  // Clip's min and max
    if (c.inputs[i] == nullptr) continue;
    if (c.inputs[i]->elements() != 1) {
      return NodeError(c.node, InputLabel(c.node, static_cast<int>(i)), " must be a scalar, got ",
                       ShapeToString(c.inputs[i]->shape));
    }
  }
  return std::vector<TensorType>{*c.inputs[0]};
}

float ScalarInput(const RunContext& ctx, size_t i, float fallback) {
  if (i >= ctx.inputs.size() || ctx.inputs[i] == nullptr) return fallback;
  float v = 0;
  LoadAsFloat(*ctx.inputs[i], 0, 1, 1, &v);
  return v;
}

absl::Status RunUnary(RunContext& ctx, UnaryOp op) {
  if (op == UnaryOp::kGeluErf && ctx.attrs.String("approximate", "none").value_or("none") == "tanh") {
    op = UnaryOp::kGeluTanh;
  }
  auto params = ParamsFor(op, ctx.attrs);
  if (!params.ok()) return params.status();
  UnaryParams p = *params;
  if (op == UnaryOp::kClip) {
    p.alpha = ScalarInput(ctx, 1, -std::numeric_limits<float>::infinity());
    p.beta = ScalarInput(ctx, 2, std::numeric_limits<float>::infinity());
  }
  const HostTensor& x = *ctx.inputs[0];
  const HostTensor& out = ctx.outputs[0];
  const BroadcastMap same(x.type().shape, out.type().shape);
  const bool saturate = ctx.preset.fp16_saturation;
  const kernels::VectorKernelSet& k = kernels::VectorKernels();
  ForEachChunk(ctx, 2, device::VectorPasses(device::KernelOf(op)), [&](int64_t s, int64_t len) {
    thread_local std::vector<float> xi, xo;
    const kernels::VecDst dst = ChunkDst(out, s, len, xo);
    const uint64_t over = k.unary(op, p, ChunkSrc(x, same, s, len, xi), dst, static_cast<size_t>(len), saturate);
    return FinishChunk(out, s, len, dst, over);
  });
  return absl::OkStatus();
}

// The step this node is in a fused chain (fusion.h): the same op and parameters
// its run uses, so the fused chain computes what this node would.
std::optional<kernels::EwStep> FusionStep(const InferContext& c, UnaryOp op, int chain_input) {
  if (chain_input != 0) return std::nullopt;
  if (op == UnaryOp::kGeluErf && c.attrs.String("approximate", "none").value_or("none") == "tanh") {
    op = UnaryOp::kGeluTanh;
  }
  auto params = ParamsFor(op, c.attrs);
  if (!params.ok()) return std::nullopt;
  kernels::EwStep step;
  step.kind = kernels::EwStep::Kind::kUnary;
  step.unary = op;
  step.params = *params;
  if (op == UnaryOp::kClip) {
    // Clip's bounds join the program only when they are known now (as RunUnary reads them).
    step.params = {-std::numeric_limits<float>::infinity(), std::numeric_limits<float>::infinity()};
    float* bound[3] = {nullptr, &step.params.alpha, &step.params.beta};
    for (size_t i = 1; i < c.inputs.size() && i < 3; ++i) {
      if (c.inputs[i] == nullptr) continue;
      if (c.constants[i] == nullptr) return std::nullopt;
      LoadAsFloat(*c.constants[i], 0, 1, 1, bound[i]);
    }
  }
  return step;
}

OpDef UnaryDef(std::string name, UnaryOp op, int max_inputs = 1) {
  OpDef d;
  d.name = std::move(name);
  d.units = "Vector, MTE2, MTE3";
  d.task_type = device::TaskType::kAiVectorCore;
  d.dtypes = {v1::FLOAT16, v1::FLOAT32};
  d.max_inputs = max_inputs;
  d.attributes = AttributesOf(op);
  d.infer = [op](InferContext& c) { return InferUnary(c, op); };
  d.run = [op](RunContext& c) { return RunUnary(c, op); };
  d.fusion_step = [op](const InferContext& c, int chain_input) { return FusionStep(c, op, chain_input); };
  return d;
}

}  // namespace

void RegisterActivationOps(OpRegistry& r) {
  r.Register(UnaryDef("Relu", UnaryOp::kRelu));
  r.Register(UnaryDef("Neg", UnaryOp::kNeg));
  r.Register(UnaryDef("Abs", UnaryOp::kAbs));
  r.Register(UnaryDef("Sqrt", UnaryOp::kSqrt));
  r.Register(UnaryDef("Reciprocal", UnaryOp::kReciprocal));
  r.Register(UnaryDef("Exp", UnaryOp::kExp));
  r.Register(UnaryDef("Log", UnaryOp::kLog));
  r.Register(UnaryDef("Erf", UnaryOp::kErf));
  r.Register(UnaryDef("Sigmoid", UnaryOp::kSigmoid));
  r.Register(UnaryDef("Tanh", UnaryOp::kTanh));
  r.Register(UnaryDef("Sin", UnaryOp::kSin));
  r.Register(UnaryDef("Cos", UnaryOp::kCos));
  r.Register(UnaryDef("Silu", UnaryOp::kSilu));  // not an ONNX op; x * sigmoid(x) as one node
  r.Register(UnaryDef("Gelu", UnaryOp::kGeluErf));
  r.Register(UnaryDef("LeakyRelu", UnaryOp::kLeakyRelu));
  r.Register(UnaryDef("HardSigmoid", UnaryOp::kHardSigmoid));
  r.Register(UnaryDef("Clip", UnaryOp::kClip, 3));
  r.Register(UnaryDef("Floor", UnaryOp::kFloor));
  r.Register(UnaryDef("Ceil", UnaryOp::kCeil));
  r.Register(UnaryDef("Round", UnaryOp::kRound));
  r.Register(UnaryDef("Sign", UnaryOp::kSign));
  r.Register(UnaryDef("HardSwish", UnaryOp::kHardSwish));
  r.Register(UnaryDef("Softplus", UnaryOp::kSoftplus));
  r.Register(UnaryDef("Mish", UnaryOp::kMish));
  r.Register(UnaryDef("Elu", UnaryOp::kElu));
  r.Register(UnaryDef("Selu", UnaryOp::kSelu));
  r.Register(UnaryDef("Celu", UnaryOp::kCelu));
}

}  // namespace npu::graph::ops
