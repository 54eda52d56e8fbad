// Gradient rules of the elementwise arithmetic (NumPy broadcasting undone by
// summing over the broadcast axes), the reductions, MatMul and Gemm. Every
// rule is a composition of forward ops; the Cube runs the matrix products of
// MatMul's and Gemm's gradients (Gemm's transA/transB read the transposed
// operands without a copy).
#include <numeric>

#include "server/train/gradient_rules.h"

namespace npu::train {
namespace {

using graph::Shape;

std::string Neg(GradContext& c, const std::string& v) { return c.g.Add1("Neg", {v}, {}, c.Base() + "/neg"); }

absl::Status AddRule(GradContext& c, bool subtract) {
  const Shape& y = c.OutputType(0).shape;
  if (c.Needs(0)) c.dx[0] = c.Unbroadcast(c.dy[0], y, c.InputType(0).shape);
  if (c.Needs(1)) c.dx[1] = c.Unbroadcast(subtract ? Neg(c, c.dy[0]) : c.dy[0], y, c.InputType(1).shape);
  return absl::OkStatus();
}

absl::Status MulRule(GradContext& c) {
  const Shape& y = c.OutputType(0).shape;
  const std::string base = c.Base();
  if (c.Needs(0)) c.dx[0] = c.Unbroadcast(c.g.Add1("Mul", {c.dy[0], c.node.inputs(1)}, {}, base + "/da"), y, c.InputType(0).shape);
  if (c.Needs(1)) c.dx[1] = c.Unbroadcast(c.g.Add1("Mul", {c.dy[0], c.node.inputs(0)}, {}, base + "/db"), y, c.InputType(1).shape);
  return absl::OkStatus();
}

absl::Status DivRule(GradContext& c) {
  // y = a / b: da = dy / b, db = -dy * y / b.
  const Shape& y = c.OutputType(0).shape;
  const std::string base = c.Base();
  if (c.Needs(0)) c.dx[0] = c.Unbroadcast(c.g.Add1("Div", {c.dy[0], c.node.inputs(1)}, {}, base + "/da"), y, c.InputType(0).shape);
  if (c.Needs(1)) {
    const std::string dy_y = c.g.Add1("Mul", {c.dy[0], c.node.outputs(0)}, {}, base + "/dy_y");
    const std::string q = c.g.Add1("Div", {dy_y, c.node.inputs(1)}, {}, base + "/db");
    c.dx[1] = c.Unbroadcast(Neg(c, q), y, c.InputType(1).shape);
  }
  return absl::OkStatus();
}

absl::Status PowRule(GradContext& c) {
  // y = x^e for a constant e: dx = dy * e * x^(e - 1).
  if (c.Needs(1)) return c.Unsupported("with respect to the exponent");
  auto e = c.ConstantScalar(1);
  if (!e.ok()) return e.status();
  const graph::DataType dt = c.InputType(0).dtype;
  const std::string base = c.Base();
  const std::string em1 = c.g.ScalarConstant(base + "/exponent", *e - 1.0f, dt);
  const std::string p = c.g.Add1("Pow", {c.node.inputs(0), em1}, {}, base + "/pow");
  const std::string dyp = c.g.Add1("Mul", {c.dy[0], c.Scale(p, *e, dt)}, {}, base + "/dx");
  c.dx[0] = c.Unbroadcast(dyp, c.OutputType(0).shape, c.InputType(0).shape);
  return absl::OkStatus();
}

absl::Status UnaryRule(GradContext& c) {
  const std::string& op = c.node.op_type();
  const std::string base = c.Base();
  const std::string& x = c.node.inputs(0);
  const std::string& y = c.node.outputs(0);
  const graph::DataType dt = c.InputType(0).dtype;
  if (op == "Neg") {
    c.dx[0] = Neg(c, c.dy[0]);
  } else if (op == "Exp") {
    c.dx[0] = c.g.Add1("Mul", {c.dy[0], y}, {}, base + "/dx");
  } else if (op == "Log") {
    c.dx[0] = c.g.Add1("Div", {c.dy[0], x}, {}, base + "/dx");
  } else if (op == "Sqrt") {  // dx = dy * 0.5 / y
    c.dx[0] = c.g.Add1("Div", {c.Scale(c.dy[0], 0.5f, dt), y}, {}, base + "/dx");
  } else if (op == "Reciprocal") {  // dx = -dy * y^2
    const std::string dyy = c.g.Add1("Mul", {c.dy[0], y}, {}, base + "/dy_y");
    c.dx[0] = Neg(c, c.g.Add1("Mul", {dyy, y}, {}, base + "/dy_yy"));
  } else {  // Identity
    c.dx[0] = c.dy[0];
  }
  return absl::OkStatus();
}

absl::Status CastRule(GradContext& c) {
  const graph::DataType from = c.InputType(0).dtype;
  if (!graph::IsFloat(from)) return absl::OkStatus();
  c.dx[0] = from == c.OutputType(0).dtype
                ? c.dy[0]
                : c.g.Add1("Cast", {c.dy[0]}, {{"to", AttrInt(OnnxFloatCode(from))}}, c.Base() + "/cast");
  return absl::OkStatus();
}

// Sum and mean: the gradient is dy spread back over the reduced axes.
absl::Status ReduceRule(GradContext& c, bool mean) {
  const Shape& x = c.InputType(0).shape;
  std::vector<int64_t> axes;
  if (c.node.inputs_size() > 1 && !c.node.inputs(1).empty()) {
    auto a = c.ConstantInts(1);
    if (!a.ok()) return a.status();
    axes = *a;
  } else if (auto it = c.node.attributes().find("axes"); it != c.node.attributes().end()) {
    axes.assign(it->second.ints().values().begin(), it->second.ints().values().end());
  }
  const auto noop = c.node.attributes().find("noop_with_empty_axes");
  if (axes.empty() && noop != c.node.attributes().end() && noop->second.i() != 0) {
    c.dx[0] = c.dy[0];
    return absl::OkStatus();
  }
  const int64_t rank = static_cast<int64_t>(x.size());
  std::vector<bool> reduced(x.size(), axes.empty());
  for (int64_t a : axes) reduced[a < 0 ? a + rank : a] = true;
  Shape kept = x;
  int64_t count = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (reduced[d]) count *= x[d], kept[d] = 1;
  }
  std::string g = c.Reshape(c.dy[0], c.OutputType(0).shape, kept);
  if (mean) g = c.Scale(g, 1.0f / static_cast<float>(count), c.InputType(0).dtype);
  const std::string shape = c.g.IntsConstant(c.Base() + "/shape", x);
  c.dx[0] = c.g.Add1("Expand", {g, shape}, {}, c.Base() + "/expand");
  return absl::OkStatus();
}

// Swaps the last two axes.
std::string TransposeLast(GradContext& c, const std::string& v, size_t rank) {
  std::vector<int64_t> perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[rank - 1], perm[rank - 2]);
  return c.g.Add1("Transpose", {v}, {{"perm", AttrInts(perm)}}, c.Base() + "/transpose");
}

absl::Status MatMulRule(GradContext& c) {
  const Shape& a = c.InputType(0).shape;
  const Shape& b = c.InputType(1).shape;
  if (a.size() < 2 || b.size() < 2) return c.Unsupported("with a 1-D operand (reshape it to 2-D)");
  const std::string& dy = c.dy[0];
  const std::string base = c.Base();
  if (a.size() == 2 && b.size() == 2) {  // the Cube reads the transposed operand itself
    if (c.Needs(0)) c.dx[0] = c.g.Add1("Gemm", {dy, c.node.inputs(1)}, {{"transB", AttrInt(1)}}, base + "/da");
    if (c.Needs(1)) c.dx[1] = c.g.Add1("Gemm", {c.node.inputs(0), dy}, {{"transA", AttrInt(1)}}, base + "/db");
    return absl::OkStatus();
  }
  const Shape& y = c.OutputType(0).shape;
  if (c.Needs(0)) {
    const std::string da = c.g.Add1("MatMul", {dy, TransposeLast(c, c.node.inputs(1), b.size())}, {}, base + "/da");
    Shape full(y.begin(), y.end() - 2);
    full.push_back(a[a.size() - 2]), full.push_back(a.back());
    c.dx[0] = c.Unbroadcast(da, full, a);
  }
  if (c.Needs(1)) {
    const std::string db = c.g.Add1("MatMul", {TransposeLast(c, c.node.inputs(0), a.size()), dy}, {}, base + "/db");
    Shape full(y.begin(), y.end() - 2);
    full.push_back(b[b.size() - 2]), full.push_back(b.back());
    c.dx[1] = c.Unbroadcast(db, full, b);
  }
  return absl::OkStatus();
}

absl::Status GemmRule(GradContext& c) {
  auto attr = [&](const char* name, float fallback) {
    auto it = c.node.attributes().find(name);
    if (it == c.node.attributes().end()) return fallback;
    return it->second.value_case() == v1::AttributeValue::kF ? it->second.f() : static_cast<float>(it->second.i());
  };
  const float alpha = attr("alpha", 1.0f), beta = attr("beta", 1.0f);
  const bool ta = attr("transA", 0) != 0, tb = attr("transB", 0) != 0;
  const std::string& a = c.node.inputs(0);
  const std::string& b = c.node.inputs(1);
  const std::string& dy = c.dy[0];
  const std::string base = c.Base();
  Attributes scale;
  if (alpha != 1.0f) scale["alpha"] = AttrFloat(alpha);
  auto gemm = [&](const std::string& x, const std::string& y, bool tx, bool ty, const std::string& name) {
    Attributes at = scale;
    if (tx) at["transA"] = AttrInt(1);
    if (ty) at["transB"] = AttrInt(1);
    return c.g.Add1("Gemm", {x, y}, at, base + name);
  };
  // Y = alpha op(A) op(B) + beta C.
  if (c.Needs(0)) c.dx[0] = ta ? gemm(b, dy, tb, true, "/da") : gemm(dy, b, false, !tb, "/da");
  if (c.Needs(1)) c.dx[1] = tb ? gemm(dy, a, true, ta, "/db") : gemm(a, dy, !ta, false, "/db");
  if (c.node.inputs_size() > 2 && !c.node.inputs(2).empty() && c.Needs(2)) {
    const graph::TensorType& ct = c.InputType(2);
    c.dx[2] = c.Unbroadcast(c.Scale(dy, beta, ct.dtype), c.OutputType(0).shape, ct.shape);
  }
  return absl::OkStatus();
}

}  // namespace

void AddMathGradRules(std::map<std::string, GradRule>& rules) {
  rules["Add"] = [](GradContext& c) { return AddRule(c, false); };
  rules["Sub"] = [](GradContext& c) { return AddRule(c, true); };
  rules["Mul"] = MulRule;
  rules["Div"] = DivRule;
  rules["Pow"] = PowRule;
  for (const char* op : {"Neg", "Exp", "Log", "Sqrt", "Reciprocal", "Identity"}) rules[op] = UnaryRule;
  rules["Cast"] = CastRule;
  rules["ReduceSum"] = [](GradContext& c) { return ReduceRule(c, false); };
  rules["ReduceMean"] = [](GradContext& c) { return ReduceRule(c, true); };
  rules["MatMul"] = MatMulRule;
  rules["Gemm"] = GemmRule;
}

}  // namespace npu::train
