// Gradient rules of the Vector unary ops without a gradient op of their own
// (Erf, Abs, Sin, Cos, Softplus, Silu, Mish, Clip, HardSigmoid, HardSwish, Elu,
// Selu, Celu), PRelu and Where: each is the incoming gradient times the op's
// derivative, composed of forward ops (comparisons and Where pick the
// branches). Where an op has a kink the branch taken at it is torch's
// (derivatives.yaml): Clip passes the gradient at both bounds, HardSigmoid at
// neither, HardSwish takes x / 3 + 1/2 on [-3, 3], Elu/Selu/Celu and PRelu take
// the negative branch at 0, Abs gives 0 there. (Floor, Ceil, Round and Sign
// are flat: FlatOps in gradient_rules.h.)
#include <cmath>

#include "server/train/gradient_rules.h"

namespace npu::train {
namespace {

const std::string& X(GradContext& c) { return c.node.inputs(0); }
const std::string& Y(GradContext& c) { return c.node.outputs(0); }
graph::DataType Dt(GradContext& c) { return c.InputType(0).dtype; }

// dx = dy * d, for a derivative d (of x's shape) the rule composes.
absl::Status Times(GradContext& c, const std::string& derivative) {
  c.dx[0] = c.Op("Mul", {c.dy[0], derivative});
  return absl::OkStatus();
}

absl::Status ErfRule(GradContext& c) {  // 2 / sqrt(pi) * exp(-x^2)
  const std::string e = c.Op("Exp", {c.Op("Neg", {c.Op("Mul", {X(c), X(c)})})});
  return Times(c, c.Scale(e, static_cast<float>(2.0 / std::sqrt(M_PI)), Dt(c)));
}

absl::Status SoftplusRule(GradContext& c) { return Times(c, c.Op("Sigmoid", {X(c)})); }

absl::Status SiluRule(GradContext& c) {  // s (1 + x (1 - s)), s = sigmoid(x)
  const std::string s = c.Op("Sigmoid", {X(c)});
  const std::string one = c.Scalar(1.0f, Dt(c));
  const std::string t = c.Op("Add", {c.Op("Mul", {X(c), c.Op("Sub", {one, s})}), one});
  return Times(c, c.Op("Mul", {s, t}));
}

absl::Status MishRule(GradContext& c) {  // t + x sigmoid(x) (1 - t^2), t = tanh(softplus(x))
  const std::string t = c.Op("Tanh", {c.Op("Softplus", {X(c)})});
  const std::string one = c.Scalar(1.0f, Dt(c));
  const std::string sech2 = c.Op("Sub", {one, c.Op("Mul", {t, t})});
  const std::string xs = c.Op("Mul", {X(c), c.Op("Sigmoid", {X(c)})});
  return Times(c, c.Op("Add", {t, c.Op("Mul", {xs, sech2})}));
}

absl::Status AbsRule(GradContext& c) { return Times(c, c.Op("Sign", {X(c)})); }
absl::Status SinRule(GradContext& c) { return Times(c, c.Op("Cos", {X(c)})); }
absl::Status CosRule(GradContext& c) { return Times(c, c.Op("Neg", {c.Op("Sin", {X(c)})})); }

// Clip(x, min, max): dx where min <= x <= max; a bound given as a value gets
// the gradients of the elements clipped to it (torch.clamp with tensor bounds).
absl::Status ClipRule(GradContext& c) {
  const graph::Shape& y = c.OutputType(0).shape;
  std::string inside;
  auto both = [&](const std::string& cond) { inside = inside.empty() ? cond : c.Op("And", {inside, cond}); };
  if (c.Has(1)) both(c.Op("GreaterOrEqual", {X(c), c.node.inputs(1)}));
  if (c.Has(2)) both(c.Op("LessOrEqual", {X(c), c.node.inputs(2)}));
  c.dx[0] = inside.empty() ? c.dy[0] : c.Masked(inside, c.dy[0], Dt(c));
  for (int i = 1; i <= 2; ++i) {
    if (!c.Has(i) || !c.Needs(i)) continue;
    const std::string out = c.Op(i == 1 ? "Less" : "Greater", {X(c), c.node.inputs(i)});
    c.dx[i] = c.Unbroadcast(c.Masked(out, c.dy[0], Dt(c)), y, c.InputType(i).shape);
  }
  return absl::OkStatus();
}

// clamp(alpha x + beta, 0, 1): alpha strictly inside (0, 1), read off y.
absl::Status HardSigmoidRule(GradContext& c) {
  const float alpha = c.FloatAttr("alpha", 0.2f);
  const std::string inside = c.Op("And", {c.Op("Greater", {Y(c), c.Scalar(0.0f, Dt(c))}),
                                          c.Op("Less", {Y(c), c.Scalar(1.0f, Dt(c))})});
  c.dx[0] = c.Masked(inside, c.Scale(c.dy[0], alpha, Dt(c)), Dt(c));
  return absl::OkStatus();
}

// x relu6(x + 3) / 6: 0 below -3, x / 3 + 1/2 on [-3, 3], 1 above.
absl::Status HardSwishRule(GradContext& c) {
  const std::string ramp = c.Op("Add", {c.Scale(X(c), 1.0f / 3.0f, Dt(c)), c.Scalar(0.5f, Dt(c))});
  const std::string d = c.Op("Where", {c.Op("LessOrEqual", {X(c), c.Scalar(3.0f, Dt(c))}), ramp, c.Scalar(1.0f, Dt(c))});
  c.dx[0] = c.Masked(c.Op("GreaterOrEqual", {X(c), c.Scalar(-3.0f, Dt(c))}), c.Op("Mul", {c.dy[0], d}), Dt(c));
  return absl::OkStatus();
}

// x > 0 ? pos * dy : dy * (y * inv + neg): the exponential branch's derivative
// from its output (Elu: y + alpha; Selu: y + gamma alpha; Celu: y / alpha + 1).
absl::Status ExpLinearRule(GradContext& c, float pos, float inv, float neg) {
  const graph::DataType dt = Dt(c);
  const std::string positive = c.Op("Greater", {X(c), c.Scalar(0.0f, dt)});
  const std::string d = c.Op("Add", {c.Scale(Y(c), inv, dt), c.Scalar(neg, dt)});
  c.dx[0] = c.Op("Where", {positive, c.Scale(c.dy[0], pos, dt), c.Op("Mul", {c.dy[0], d})});
  return absl::OkStatus();
}

absl::Status EluRule(GradContext& c) { return ExpLinearRule(c, 1.0f, 1.0f, c.FloatAttr("alpha", 1.0f)); }

absl::Status SeluRule(GradContext& c) {
  // The forward's coefficients (activation_ops.cc): gamma, and alpha x gamma as one fp32 product.
  const float alpha = c.FloatAttr("alpha", 1.67326319217681884765625f);
  const float gamma = c.FloatAttr("gamma", 1.05070102214813232421875f);
  return ExpLinearRule(c, gamma, 1.0f, alpha * gamma);
}

absl::Status CeluRule(GradContext& c) {
  const float alpha = c.FloatAttr("alpha", 1.0f);
  return ExpLinearRule(c, 1.0f, static_cast<float>(1.0 / static_cast<double>(alpha)), 1.0f);
}

// x > 0 ? x : slope x, slope broadcast to x: dslope sums dy x over the
// elements at or below 0.
absl::Status PReluRule(GradContext& c) {
  const graph::DataType dt = Dt(c);
  const std::string positive = c.Op("Greater", {X(c), c.Scalar(0.0f, dt)});
  if (c.Needs(0)) c.dx[0] = c.Op("Where", {positive, c.dy[0], c.Op("Mul", {c.dy[0], c.node.inputs(1)})});
  if (c.Needs(1)) {
    const std::string d = c.Op("Where", {positive, c.Scalar(0.0f, dt), c.Op("Mul", {c.dy[0], X(c)})});
    c.dx[1] = c.Unbroadcast(d, c.OutputType(0).shape, c.InputType(1).shape);
  }
  return absl::OkStatus();
}

// Where(cond, a, b): each branch gets dy where it was chosen; cond gets none.
absl::Status WhereRule(GradContext& c) {
  const graph::Shape& y = c.OutputType(0).shape;
  const std::string& cond = c.node.inputs(0);
  const graph::DataType dt = c.OutputType(0).dtype;
  if (c.Needs(1)) c.dx[1] = c.Unbroadcast(c.Masked(cond, c.dy[0], dt), y, c.InputType(1).shape);
  if (c.Needs(2)) {
    c.dx[2] = c.Unbroadcast(c.Op("Where", {cond, c.Scalar(0.0f, dt), c.dy[0]}), y, c.InputType(2).shape);
  }
  return absl::OkStatus();
}

}  // namespace

void AddActivationGradRules(std::map<std::string, GradRule>& rules) {
  rules["Erf"] = ErfRule;
  rules["Softplus"] = SoftplusRule;
  rules["Silu"] = SiluRule;
  rules["Mish"] = MishRule;
  rules["Abs"] = AbsRule;
  rules["Sin"] = SinRule;
  rules["Cos"] = CosRule;
  rules["Clip"] = ClipRule;
  rules["HardSigmoid"] = HardSigmoidRule;
  rules["HardSwish"] = HardSwishRule;
  rules["Elu"] = EluRule;
  rules["Selu"] = SeluRule;
  rules["Celu"] = CeluRule;
  rules["PRelu"] = PReluRule;
  rules["Where"] = WhereRule;
}

}  // namespace npu::train
