// Gradient rules of the reductions and of the variadic Sum, Mean, Max and
// Min. A reduction's gradient is dy viewed with the reduced axes kept (size
// 1) and broadcast back over them, times the reduction's derivative: 1 (Sum),
// 1 / count (Mean), 2x (SumSquare), sign(x) (L1), x / y (L2, 0 where y is 0),
// exp(x - y) (LogSumExp), the product of the other elements (Prod, exact
// when elements are 0: no division by them), and for Max/Min the elements
// equal to the result sharing it evenly (torch.amax/amin; the elementwise
// Max/Min split ties the same way, as torch.maximum does).
#include "absl/strings/str_cat.h"
#include "server/train/gradient_rules.h"

namespace npu::train {
namespace {

using graph::Shape;

struct Reduced {
  std::vector<int64_t> axes;  // the reduced axes, ascending, non-negative
  Shape kept;                 // x's shape with them 1
  int64_t count = 1;          // elements per result
  bool noop = false;          // noop_with_empty_axes and no axes: the identity
};

absl::StatusOr<Reduced> ReducedAxes(GradContext& c) {
  const Shape& x = c.InputType(0).shape;
  std::vector<int64_t> axes;
  if (c.Has(1)) {
    auto a = c.ConstantInts(1);
    if (!a.ok()) return a.status();
    axes = *a;
  } else {
    axes = c.IntsAttr("axes", {});
  }
  Reduced r;
  if (axes.empty() && c.IntAttr("noop_with_empty_axes", 0) != 0) {
    r.noop = true;
    return r;
  }
  const int64_t rank = static_cast<int64_t>(x.size());
  std::vector<bool> reduced(x.size(), axes.empty());
  for (int64_t a : axes) reduced[a < 0 ? a + rank : a] = true;
  r.kept = x;
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduced[d]) continue;
    r.axes.push_back(d);
    r.count *= x[d];
    r.kept[d] = 1;
  }
  return r;
}

// A value of the reduction's output shape viewed with the reduced axes kept.
std::string Kept(GradContext& c, const std::string& v, const Reduced& r) {
  return c.Reshape(v, c.OutputType(0).shape, r.kept);
}

// ReduceSum (keepdims) of `v` over r's axes.
std::string SumKept(GradContext& c, const std::string& v, const Reduced& r) {
  return c.Op("ReduceSum", {v, c.g.IntsConstant(c.Base() + "/axes", r.axes)}, {{"keepdims", AttrInt(1)}});
}

// dx = dy (kept, broadcast) * derivative(x, y kept); "" derivative: 1.
template <typename Derivative>
absl::Status ReduceWith(GradContext& c, Derivative derivative) {
  auto r = ReducedAxes(c);
  if (!r.ok()) return r.status();
  if (r->noop) {
    c.dx[0] = c.dy[0];
    return absl::OkStatus();
  }
  const std::string dy = Kept(c, c.dy[0], *r);
  const std::string d = derivative(*r, Kept(c, c.node.outputs(0), *r));
  if (!d.empty()) {
    c.dx[0] = c.Op("Mul", {dy, d});  // broadcasts dy back over the reduced axes
    return absl::OkStatus();
  }
  c.dx[0] = c.Op("Expand", {dy, c.g.IntsConstant(c.Base() + "/shape", c.InputType(0).shape)});
  return absl::OkStatus();
}

absl::Status ReduceSumRule(GradContext& c) {
  return ReduceWith(c, [](const Reduced&, const std::string&) { return std::string(); });
}

absl::Status ReduceMeanRule(GradContext& c) {
  auto r = ReducedAxes(c);
  if (!r.ok()) return r.status();
  if (r->noop) {
    c.dx[0] = c.dy[0];
    return absl::OkStatus();
  }
  const std::string g = c.Scale(Kept(c, c.dy[0], *r), 1.0f / static_cast<float>(r->count), c.InputType(0).dtype);
  c.dx[0] = c.Op("Expand", {g, c.g.IntsConstant(c.Base() + "/shape", c.InputType(0).shape)});
  return absl::OkStatus();
}

absl::Status ReduceRule(GradContext& c) {
  const std::string& op = c.node.op_type();
  const std::string& x = c.node.inputs(0);
  const graph::DataType dt = c.InputType(0).dtype;
  return ReduceWith(c, [&](const Reduced& r, const std::string& y) -> std::string {
    if (op == "ReduceSumSquare") return c.Scale(x, 2.0f, dt);
    if (op == "ReduceL1") return c.Op("Sign", {x});
    if (op == "ReduceL2") {
      const std::string zero = c.Scalar(0.0f, dt);
      const std::string is0 = c.Op("Equal", {y, zero});
      const std::string safe = c.Op("Where", {is0, c.Scalar(1.0f, dt), y});
      return c.Op("Where", {is0, zero, c.Op("Div", {x, safe})});
    }
    if (op == "ReduceLogSumExp") return c.Op("Exp", {c.Op("Sub", {x, y})});
    if (op == "ReduceLogSum") {  // 1 / sum, spread over x's shape
      return c.Op("Expand", {c.Op("Exp", {c.Op("Neg", {y})}), c.g.IntsConstant(c.Base() + "/shape", c.InputType(0).shape)});
    }
    if (op == "ReduceProd") {
      // Non-zero elements: y / x (0 when another element is 0). A zero
      // element: the product of the others when it is the only zero, else 0.
      const std::string zero = c.Scalar(0.0f, dt), one = c.Scalar(1.0f, dt);
      const std::string is0 = c.Op("Equal", {x, zero});
      const std::string safe = c.Op("Where", {is0, one, x});
      const std::string others = c.Op("ReduceProd", {safe, c.g.IntsConstant(c.Base() + "/axes", r.axes)},
                                      {{"keepdims", AttrInt(1)}});
      const std::string zeros = SumKept(c, c.Op("Cast", {is0}, {{"to", AttrInt(OnnxFloatCode(dt))}}), r);
      const std::string at0 = c.Masked(c.Op("Equal", {zeros, one}), others, dt);
      return c.Op("Where", {is0, at0, c.Op("Div", {y, safe})});
    }
    // ReduceMax, ReduceMin: the elements equal to the result, evenly.
    const std::string hit = c.Op("Cast", {c.Op("Equal", {x, y})}, {{"to", AttrInt(OnnxFloatCode(dt))}});
    return c.Op("Div", {hit, SumKept(c, hit, r)});
  });
}

absl::Status SumRule(GradContext& c, bool mean) {
  const Shape& y = c.OutputType(0).shape;
  const int n = c.node.inputs_size();
  const std::string g = mean ? c.Scale(c.dy[0], 1.0f / static_cast<float>(n), c.OutputType(0).dtype) : c.dy[0];
  for (int i = 0; i < n; ++i) {
    if (c.Needs(i)) c.dx[i] = c.Unbroadcast(g, y, c.InputType(i).shape);
  }
  return absl::OkStatus();
}

// Max/Min(x0, x1, ...): the inputs equal to the result share dy evenly.
absl::Status ExtremeRule(GradContext& c) {
  const Shape& y = c.OutputType(0).shape;
  const graph::DataType dt = c.OutputType(0).dtype;
  const int n = c.node.inputs_size();
  if (n == 1) {
    c.dx[0] = c.dy[0];
    return absl::OkStatus();
  }
  std::vector<std::string> hits;
  for (int i = 0; i < n; ++i) {
    hits.push_back(c.Op("Cast", {c.Op("Equal", {c.node.inputs(i), c.node.outputs(0)})},
                        {{"to", AttrInt(OnnxFloatCode(dt))}}));
  }
  const std::string share = c.Op("Div", {c.dy[0], c.Op("Sum", hits)});
  for (int i = 0; i < n; ++i) {
    if (c.Needs(i)) c.dx[i] = c.Unbroadcast(c.Op("Mul", {share, hits[i]}), y, c.InputType(i).shape);
  }
  return absl::OkStatus();
}

}  // namespace

void AddReduceGradRules(std::map<std::string, GradRule>& rules) {
  rules["ReduceSum"] = ReduceSumRule;
  rules["ReduceMean"] = ReduceMeanRule;
  for (const char* op : {"ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceLogSumExp", "ReduceLogSum", "ReduceProd", "ReduceMax",
                         "ReduceMin"}) {
    rules[op] = ReduceRule;
  }
  rules["Sum"] = [](GradContext& c) { return SumRule(c, false); };
  rules["Mean"] = [](GradContext& c) { return SumRule(c, true); };
  rules["Max"] = ExtremeRule;
  rules["Min"] = ExtremeRule;
}

}  // namespace npu::train
