// Gradient rules of the elementwise arithmetic (NumPy broadcasting undone by
// summing over the broadcast axes), the reductions, MatMul and Gemm. Every
// rule is a composition of forward ops; the Cube runs the matrix products of
// MatMul's and Gemm's gradients (Gemm's transA/transB read the transposed
// operands without a copy).
#include <numeric>

#include "absl/strings/str_cat.h"
#include "server/graph/ops/einsum_equation.h"
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
  // y = a^b: da = dy * b * a^(b - 1); db = dy * y * ln(a), 0 where a is 0
  // (torch masks it). A constant one-number exponent folds into constants.
  const graph::DataType dt = c.InputType(0).dtype;
  const Shape& y = c.OutputType(0).shape;
  const std::string& a = c.node.inputs(0);
  const std::string& b = c.node.inputs(1);
  if (c.Needs(0)) {
    std::string d;
    if (auto e = c.ConstantScalar(1); e.ok() && !c.Needs(1)) {
      d = c.Scale(c.Op("Pow", {a, c.Scalar(*e - 1.0f, dt)}), *e, dt);
    } else {
      const std::string bf = c.CastTo(b, c.InputType(1).dtype, dt);
      d = c.Op("Mul", {bf, c.Op("Pow", {a, c.Op("Sub", {bf, c.Scalar(1.0f, dt)})})});
    }
    c.dx[0] = c.Unbroadcast(c.Op("Mul", {c.dy[0], d}), y, c.InputType(0).shape);
  }
  if (c.Needs(1)) {
    const graph::DataType bt = c.InputType(1).dtype;
    const std::string zero = c.Scalar(0.0f, dt);
    const std::string is0 = c.Op("Equal", {a, zero});
    const std::string ln = c.Op("Log", {c.Op("Where", {is0, c.Scalar(1.0f, dt), a})});
    std::string d = c.Op("Where", {is0, zero, c.Op("Mul", {c.Op("Mul", {c.dy[0], c.node.outputs(0)}), ln})});
    c.dx[1] = c.Unbroadcast(c.CastTo(d, dt, bt), y, c.InputType(1).shape);
  }
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
  c.dx[0] = c.CastTo(c.dy[0], c.OutputType(0).dtype, from);
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
  // NumPy's matmul: a 1-D operand is a row (first) or column (second) vector,
  // the batch dims broadcast. The gradients are taken in those 2-D-or-more
  // views and viewed back.
  const Shape& a0 = c.InputType(0).shape;
  const Shape& b0 = c.InputType(1).shape;
  Shape a = a0, b = b0, y = c.OutputType(0).shape;
  if (a0.size() == 1) a = {1, a0[0]}, y.insert(y.end() - (b0.size() == 1 ? 0 : 1), 1);
  if (b0.size() == 1) b = {b0[0], 1}, y.push_back(1);
  const std::string dy = c.Reshape(c.dy[0], c.OutputType(0).shape, y);
  const std::string av = c.Reshape(c.node.inputs(0), a0, a);
  const std::string bv = c.Reshape(c.node.inputs(1), b0, b);
  const std::string base = c.Base();
  if (a.size() == 2 && b.size() == 2) {  // the Cube reads the transposed operand itself
    if (c.Needs(0)) c.dx[0] = c.Reshape(c.g.Add1("Gemm", {dy, bv}, {{"transB", AttrInt(1)}}, base + "/da"), a, a0);
    if (c.Needs(1)) c.dx[1] = c.Reshape(c.g.Add1("Gemm", {av, dy}, {{"transA", AttrInt(1)}}, base + "/db"), b, b0);
    return absl::OkStatus();
  }
  if (c.Needs(0)) {
    const std::string da = c.g.Add1("MatMul", {dy, TransposeLast(c, bv, b.size())}, {}, base + "/da");
    Shape full(y.begin(), y.end() - 2);
    full.push_back(a[a.size() - 2]), full.push_back(a.back());
    c.dx[0] = c.Reshape(c.Unbroadcast(da, full, a), a, a0);
  }
  if (c.Needs(1)) {
    const std::string db = c.g.Add1("MatMul", {TransposeLast(c, av, a.size()), dy}, {}, base + "/db");
    Shape full(y.begin(), y.end() - 2);
    full.push_back(b[b.size() - 2]), full.push_back(b.back());
    c.dx[1] = c.Reshape(c.Unbroadcast(db, full, b), b, b0);
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

// Einsum with one or two operands: an operand's gradient is the einsum of dy
// (the output's labels) and the other operand onto the labels of this operand
// that appear in either; labels summed from this operand alone are then
// broadcast back (Reshape with 1s, Expand).
absl::Status EinsumRule(GradContext& c) {
  auto eq_attr = c.node.attributes().find("equation");
  if (eq_attr == c.node.attributes().end()) return c.Unsupported("without its equation");
  std::vector<Shape> shapes;
  for (int i = 0; i < c.node.inputs_size(); ++i) shapes.push_back(c.InputType(i).shape);
  auto eq = graph::ops::ParseEinsum(c.node, eq_attr->second.s(), shapes);
  if (!eq.ok()) return eq.status();
  if (eq->operands.size() > 2) return c.Unsupported("with more than two operands");
  // Letters for the label ids; the ellipsis dims (52 + i) take letters no label uses.
  std::vector<char> letter(eq->size.size(), 0);
  std::string spare;
  for (int l = 0; l < 52; ++l) {
    const char ch = static_cast<char>(l < 26 ? 'a' + l : 'A' + (l - 26));
    if (static_cast<size_t>(l) < eq->used.size() && eq->used[l]) letter[l] = ch;
    else spare.push_back(ch);
  }
  for (size_t l = 52; l < letter.size(); ++l) {
    if (!eq->used[l]) continue;
    if (spare.empty()) return c.Unsupported("with more than 52 labels");
    letter[l] = spare.back();
    spare.pop_back();
  }
  auto word = [&](const std::vector<int>& labels) {
    std::string w;
    for (int l : labels) w.push_back(letter[l]);
    return w;
  };
  const size_t n = eq->operands.size();
  for (size_t i = 0; i < n; ++i) {
    if (!c.Needs(static_cast<int>(i))) continue;
    const std::vector<int>& mine = eq->operands[i];
    std::vector<int> kept;
    Shape kept_shape = shapes[i];
    for (size_t d = 0; d < mine.size(); ++d) {
      const bool elsewhere = eq->InOutput(mine[d]) || (n == 2 && eq->In(static_cast<int>(1 - i), mine[d]));
      if (elsewhere) kept.push_back(mine[d]);
      else kept_shape[d] = 1;
    }
    std::string equation = word(eq->output);
    std::vector<std::string> inputs = {c.dy[0]};
    if (n == 2) {
      absl::StrAppend(&equation, ",", word(eq->operands[1 - i]));
      inputs.push_back(c.node.inputs(static_cast<int>(1 - i)));
    }
    absl::StrAppend(&equation, "->", word(kept));
    std::string g = c.Op("Einsum", inputs, {{"equation", AttrString(equation)}});
    if (kept.size() != mine.size()) {
      Shape compact;
      for (int l : kept) compact.push_back(eq->size[l]);
      g = c.Reshape(g, compact, kept_shape);
      g = c.Op("Expand", {g, c.g.IntsConstant(c.Base() + "/shape", shapes[i])});
    }
    c.dx[i] = g;
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
  rules["CastLike"] = CastRule;  // the second input's values are never read: no gradient
  rules["MatMul"] = MatMulRule;
  rules["Gemm"] = GemmRule;
  rules["Einsum"] = EinsumRule;
}

}  // namespace npu::train
