// Optimizer updates as Vector ops over a parameter, with torch.optim's
// arithmetic (torch 1.13, the single-tensor path), in fp32:
//   SGDUpdate(param, grad, lr, grad_scale, found_inf[, velocity];
//             momentum, weight_decay, nesterov) -> param_out[, velocity_out]
//     g = grad * grad_scale (+ weight_decay * param); with momentum
//     v = momentum * v + g and g = v (nesterov: g + momentum * v); param -= lr * g
//   AdamUpdate(param, grad, m, v, lr, grad_scale, found_inf, step;
//              beta1, beta2, epsilon, weight_decay, decoupled) -> param_out, m_out, v_out
//     decoupled (AdamW): param *= 1 - lr * weight_decay, else g += weight_decay * param;
//     m = beta1 m + (1 - beta1) g; v = beta2 v + (1 - beta2) g^2;
//     param -= lr / (1 - beta1^step) * m / (sqrt(v) / sqrt(1 - beta2^step) + epsilon)
// grad may be fp16 (apex O2's model gradients; grad_scale = 1 / loss scale
// unscales them into fp32, as apex's master-gradient copy does). When
// found_inf is non-zero (the step's float status) every output equals its
// input: the step is skipped on the device, as torch's fused optimizers skip
// on found_inf, without a host round trip.
#include <cmath>
#include <vector>

#include "kernels/fp16.h"
#include "server/device/vector_passes.h"
#include "server/graph/element_access.h"
#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/training_op_def.h"
#include "server/graph/ops/vector_chunks.h"

namespace npu::graph::ops {
namespace {

struct SgdAttrs {
  float momentum = 0, weight_decay = 0;
  bool nesterov = false;
};

struct AdamAttrs {
  float beta1 = 0.9f, beta2 = 0.999f, epsilon = 1e-8f, weight_decay = 0;
  bool decoupled = false;
};

absl::StatusOr<SgdAttrs> ReadSgd(const NodeAttributes& a) {
  auto m = a.Float("momentum", 0.0f);
  auto wd = a.Float("weight_decay", 0.0f);
  auto n = a.Int("nesterov", 0);
  for (const absl::Status& s : {m.status(), wd.status(), n.status()}) {
    if (!s.ok()) return s;
  }
  return SgdAttrs{*m, *wd, *n != 0};
}

absl::StatusOr<AdamAttrs> ReadAdam(const NodeAttributes& a) {
  auto b1 = a.Float("beta1", 0.9f);
  auto b2 = a.Float("beta2", 0.999f);
  auto eps = a.Float("epsilon", 1e-8f);
  auto wd = a.Float("weight_decay", 0.0f);
  auto dec = a.Int("decoupled", 0);
  for (const absl::Status& s : {b1.status(), b2.status(), eps.status(), wd.status(), dec.status()}) {
    if (!s.ok()) return s;
  }
  return AdamAttrs{*b1, *b2, *eps, *wd, *dec != 0};
}

absl::Status CheckFp32Like(const InferContext& c, int i, const TensorType& param) {
  const TensorType& t = *c.inputs[i];
  if (t.dtype != v1::FLOAT32 || t.shape != param.shape) {
    return NodeError(c.node, "input \"", c.node.inputs(i), "\" must be FLOAT32 of the parameter's shape ",
                     ShapeToString(param.shape), ", got ", ToString(t));
  }
  return absl::OkStatus();
}

absl::Status CheckScalar(const InferContext& c, int i, bool integer) {
  const TensorType& t = *c.inputs[i];
  const bool ok = t.elements() == 1 && (integer ? (t.dtype == v1::INT64 || t.dtype == v1::INT32) : t.dtype == v1::FLOAT32);
  if (ok) return absl::OkStatus();
  return NodeError(c.node, "input \"", c.node.inputs(i), "\" must be one ", integer ? "INT64" : "FLOAT32", ", got ",
                   ToString(t));
}

absl::Status CheckParamAndGrad(const InferContext& c) {
  const TensorType& p = *c.inputs[0];
  if (p.dtype != v1::FLOAT32) {
    return NodeError(c.node, "the parameter \"", c.node.inputs(0), "\" must be FLOAT32 (the master copy), got ",
                     ToString(p));
  }
  const TensorType& g = *c.inputs[1];
  if (!IsFloat(g.dtype) || g.shape != p.shape) {
    return NodeError(c.node, "the gradient \"", c.node.inputs(1), "\" ", ToString(g),
                     " must be a float of the parameter's shape ", ShapeToString(p.shape));
  }
  return absl::OkStatus();
}

float Scalar(const HostTensor* t) {
  float v = 0;
  LoadAsFloat(*t, 0, 1, 1, &v);
  return v;
}

absl::StatusOr<std::vector<TensorType>> InferSgd(InferContext& c) {
  auto a = ReadSgd(c.attrs);
  if (!a.ok()) return a.status();
  if (auto s = CheckParamAndGrad(c); !s.ok()) return s;
  for (int i = 2; i < 5; ++i) {
    if (auto s = CheckScalar(c, i, false); !s.ok()) return s;
  }
  const bool has_velocity = c.inputs.size() > 5 && c.inputs[5] != nullptr;
  if ((a->momentum != 0.0f) != has_velocity) {
    return NodeError(c.node, "momentum ", a->momentum, a->momentum != 0.0f ? " needs" : " takes no",
                     " velocity input (input 5)");
  }
  if (has_velocity) {
    if (auto s = CheckFp32Like(c, 5, *c.inputs[0]); !s.ok()) return s;
  } else if (c.node.outputs_size() > 1) {
    return NodeError(c.node, "without momentum there is no velocity output");
  }
  return std::vector<TensorType>{*c.inputs[0], *c.inputs[0]};
}

absl::Status RunSgd(RunContext& ctx) {
  const SgdAttrs a = *ReadSgd(ctx.attrs);
  const HostTensor& p = *ctx.inputs[0];
  const HostTensor& g = *ctx.inputs[1];
  const float lr = Scalar(ctx.inputs[2]), scale = Scalar(ctx.inputs[3]);
  const bool skip = Scalar(ctx.inputs[4]) != 0.0f;
  const HostTensor* vel = ctx.inputs.size() > 5 ? ctx.inputs[5] : nullptr;
  const HostTensor& p_out = ctx.outputs[0];
  const HostTensor* v_out = ctx.outputs.size() > 1 ? &ctx.outputs[1] : nullptr;
  const BroadcastMap same(p.type().shape, p.type().shape);
  ForEachChunk(ctx, vel ? 5 : 3, device::VectorPasses(device::VectorKernel::kSgdUpdate), [&](int64_t s, int64_t len) -> uint64_t {
    thread_local std::vector<float> xg, xp;
    const float* pp = p.as<float>() + s;
    float* po = p_out.mutable_as<float>() + s;
    float* vo = v_out ? v_out->mutable_as<float>() + s : nullptr;
    if (skip) {
      std::copy_n(pp, len, po);
      if (vo) std::copy_n(vel->as<float>() + s, len, vo);
      return 0;
    }
    const float* pg = ChunkAsFloat(g, same, s, len, xg);
    for (int64_t i = 0; i < len; ++i) {
      float d = pg[i] * scale;
      if (a.weight_decay != 0.0f) d = d + a.weight_decay * pp[i];
      if (vo) {
        const float v = a.momentum * vel->as<float>()[s + i] + d;
        vo[i] = v;
        d = a.nesterov ? d + a.momentum * v : v;
      }
      po[i] = pp[i] + (-lr) * d;
    }
    uint64_t overflow = kernels::CountNonFinite(po, static_cast<size_t>(len));
    if (vo) overflow += kernels::CountNonFinite(vo, static_cast<size_t>(len));
    return overflow;
  });
  return absl::OkStatus();
}

absl::StatusOr<std::vector<TensorType>> InferAdam(InferContext& c) {
  auto a = ReadAdam(c.attrs);
  if (!a.ok()) return a.status();
  if (auto s = CheckParamAndGrad(c); !s.ok()) return s;
  for (int i = 2; i < 4; ++i) {
    if (auto s = CheckFp32Like(c, i, *c.inputs[0]); !s.ok()) return s;
  }
  for (int i = 4; i < 7; ++i) {
    if (auto s = CheckScalar(c, i, false); !s.ok()) return s;
  }
  if (auto s = CheckScalar(c, 7, true); !s.ok()) return s;
  return std::vector<TensorType>{*c.inputs[0], *c.inputs[0], *c.inputs[0]};
}

absl::Status RunAdam(RunContext& ctx) {
  const AdamAttrs a = *ReadAdam(ctx.attrs);
  const HostTensor& p = *ctx.inputs[0];
  const HostTensor& g = *ctx.inputs[1];
  const float* m = ctx.inputs[2]->as<float>();
  const float* v = ctx.inputs[3]->as<float>();
  const float lr = Scalar(ctx.inputs[4]), scale = Scalar(ctx.inputs[5]);
  const bool skip = Scalar(ctx.inputs[6]) != 0.0f;
  const HostTensor& st = *ctx.inputs[7];
  const double step = st.type().dtype == v1::INT64 ? static_cast<double>(st.as<int64_t>()[0]) : st.as<int32_t>()[0];
  if (!skip && step < 1) return NodeError(ctx.node, "step ", step, " must be >= 1");
  // As torch: the bias corrections and the step size in double, used as fp32.
  const double bc1 = 1.0 - std::pow(static_cast<double>(a.beta1), step);
  const double bc2 = 1.0 - std::pow(static_cast<double>(a.beta2), step);
  const float step_size = static_cast<float>(static_cast<double>(lr) / bc1);
  const float bc2_sqrt = static_cast<float>(std::sqrt(bc2));
  const float decay = static_cast<float>(1.0 - static_cast<double>(lr) * a.weight_decay);
  float* po = ctx.outputs[0].mutable_as<float>();
  float* mo = ctx.outputs.size() > 1 ? ctx.outputs[1].mutable_as<float>() : nullptr;
  float* vo = ctx.outputs.size() > 2 ? ctx.outputs[2].mutable_as<float>() : nullptr;
  const BroadcastMap same(p.type().shape, p.type().shape);
  ForEachChunk(ctx, 7, device::VectorPasses(device::VectorKernel::kAdamUpdate), [&](int64_t s, int64_t len) -> uint64_t {
    thread_local std::vector<float> xg, mm, vv;
    const float* pp = p.as<float>() + s;
    mm.resize(static_cast<size_t>(len)), vv.resize(static_cast<size_t>(len));
    if (skip) {
      std::copy_n(pp, len, po + s);
      if (mo) std::copy_n(m + s, len, mo + s);
      if (vo) std::copy_n(v + s, len, vo + s);
      return 0;
    }
    const float* pg = ChunkAsFloat(g, same, s, len, xg);
    uint64_t overflow = 0;
    for (int64_t i = 0; i < len; ++i) {
      float param = pp[i], grad = pg[i] * scale;
      if (a.weight_decay != 0.0f) {
        if (a.decoupled) {
          param = param * decay;
        } else {
          grad = grad + a.weight_decay * param;
        }
      }
      const float m1 = m[s + i] * a.beta1 + grad * (1.0f - a.beta1);
      const float v1 = v[s + i] * a.beta2 + (grad * grad) * (1.0f - a.beta2);
      const float denom = std::sqrt(v1) / bc2_sqrt + a.epsilon;
      po[s + i] = param + (-step_size) * (m1 / denom);
      mm[i] = m1, vv[i] = v1;
    }
    if (mo) std::copy_n(mm.data(), len, mo + s);
    if (vo) std::copy_n(vv.data(), len, vo + s);
    overflow += kernels::CountNonFinite(po + s, static_cast<size_t>(len));
    overflow += kernels::CountNonFinite(mm.data(), static_cast<size_t>(len));
    overflow += kernels::CountNonFinite(vv.data(), static_cast<size_t>(len));
    return overflow;
  });
  return absl::OkStatus();
}

}  // namespace

void RegisterOptimizerOps(OpRegistry& r) {
  r.Register(WithAttributes(TrainingOpDef("SGDUpdate", 5, 6, 2, InferSgd, RunSgd),
                            {{"momentum", AttrKind::kFloat}, {"weight_decay", AttrKind::kFloat},
                             {"nesterov", AttrKind::kInt}}));
  r.Register(WithAttributes(TrainingOpDef("AdamUpdate", 8, 8, 3, InferAdam, RunAdam),
                            {{"beta1", AttrKind::kFloat},
                             {"beta2", AttrKind::kFloat},
                             {"epsilon", AttrKind::kFloat},
                             {"weight_decay", AttrKind::kFloat},
                             {"decoupled", AttrKind::kInt}}));
}

}  // namespace npu::graph::ops
