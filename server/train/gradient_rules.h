// Reverse-mode rules: for each forward op, the nodes that turn the gradients
// of its outputs into the gradients of its inputs. A rule appends nodes with
// the GraphEditor (gradient ops of server/graph/ops, or compositions of the
// forward ops) and names its results in `dx`. Rules live by op family in
// grad_rules_*.cc; FindGradRule looks them up by ONNX op type.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "npu/v1/graph.pb.h"
#include "server/train/graph_editor.h"
#include "server/train/value_types.h"

namespace npu::train {

class GradContext {
 public:
  GradContext(GraphEditor& g, const v1::Node& node, const TypeMap& types,
              const std::map<std::string, const v1::Tensor*>& constants, std::vector<std::string> dy,
              std::vector<bool> needs)
      : g(g), node(node), dy(std::move(dy)), dx(node.inputs_size()), types_(types), constants_(constants),
        needs_(std::move(needs)) {}

  GraphEditor& g;
  const v1::Node& node;
  // Gradient of each output ("" when none flows back); it has the output's type.
  std::vector<std::string> dy;
  std::vector<std::string> dx;  // out: gradient of each input (of its type); "" for none

  // Whether input i (or a value computed from it) needs a gradient.
  bool Needs(int i) const { return i < static_cast<int>(needs_.size()) && needs_[i]; }
  // The type of a forward value (gradients have the type of their value).
  const graph::TensorType& Type(const std::string& value) const { return types_.at(value); }
  const graph::TensorType& InputType(int i) const { return Type(node.inputs(i)); }
  const graph::TensorType& OutputType(int i) const { return Type(node.outputs(i)); }
  // The integers of a constant input (shape, axes, split), or an error naming it.
  absl::StatusOr<std::vector<int64_t>> ConstantInts(int input) const;
  // The values of a constant FLOAT32 input (Resize's scales).
  absl::StatusOr<std::vector<float>> ConstantFloats(int input) const;
  // The one value of a constant float input (Pow's exponent).
  absl::StatusOr<float> ConstantScalar(int input) const;
  // Base of the names of this node's gradient nodes.
  std::string Base() const { return "grad/" + node.name(); }
  // FAILED_PRECONDITION naming the node: what its gradient cannot do.
  absl::Status Unsupported(const std::string& what) const;

  // g (of shape `from`) summed to `to` over the axes NumPy broadcasting
  // expanded (ReduceSum keepdims, then Reshape); g itself when they agree.
  std::string Unbroadcast(const std::string& g, const graph::Shape& from, const graph::Shape& to);
  // Reshape of `v` (of shape `from`) to `to`, through a constant shape.
  std::string Reshape(const std::string& v, const graph::Shape& from, const graph::Shape& to);
  // `v` * scalar, the scalar of `dtype` (v's).
  std::string Scale(const std::string& v, float scalar, graph::DataType dtype);
  // op(inputs) appended under this node's base, its one output's name.
  std::string Op(const std::string& op, const std::vector<std::string>& inputs, const Attributes& attrs = {});
  // A scalar constant of `dtype`.
  std::string Scalar(float value, graph::DataType dtype);
  // Where(cond, v, 0): v where `cond` holds, zero elsewhere (v's dtype; cond broadcasts).
  std::string Masked(const std::string& cond, const std::string& v, graph::DataType dtype);
  // A constant zero tensor of `type`.
  std::string Zeros(const graph::TensorType& type);
  // A constant INT64 tensor of `shape` holding `values` (row-major).
  std::string Int64Tensor(const graph::Shape& shape, const std::vector<int64_t>& values);
  // A constant FLOAT32 tensor of `shape` holding `values` (row-major).
  std::string FloatTensor(const graph::Shape& shape, const std::vector<float>& values);
  // `v` (of `from`) cast to `to`; `v` itself when they agree.
  std::string CastTo(const std::string& v, graph::DataType from, graph::DataType to);
  // An integer attribute of the node, or `fallback`.
  int64_t IntAttr(const std::string& name, int64_t fallback) const;
  // An ints attribute of the node, or `fallback`.
  std::vector<int64_t> IntsAttr(const std::string& name, std::vector<int64_t> fallback) const;
  float FloatAttr(const std::string& name, float fallback) const;
  // Whether input i is given (present and not "").
  bool Has(int i) const { return i < node.inputs_size() && !node.inputs(i).empty(); }

 private:
  absl::StatusOr<const v1::Tensor*> ConstantInput(int input) const;

  const TypeMap& types_;
  const std::map<std::string, const v1::Tensor*>& constants_;
  std::vector<bool> needs_;
};

using GradRule = std::function<absl::Status(GradContext&)>;

// nullptr when the op has no gradient rule.
const GradRule* FindGradRule(const std::string& op_type);
// Every op with a rule, in name order.
std::vector<std::string> OpsWithGradientRules();
// The ops whose rule passes no gradient: flat almost everywhere (Floor, Ceil,
// Round, Sign), so their gradient is zero, as torch's is.
const std::set<std::string>& FlatOps();
// The multi-output ops whose rule takes a gradient for any of its outputs
// (the others': none flows back when the first output has none).
const std::set<std::string>& OpsTakingAnyOutputGradient();

// Registration by family (grad_rules_*.cc).
void AddMathGradRules(std::map<std::string, GradRule>& rules);   // elementwise, reductions, MatMul, Gemm
void AddNnGradRules(std::map<std::string, GradRule>& rules);     // activations, norms, pools, Conv, losses
void AddShapeGradRules(std::map<std::string, GradRule>& rules);  // views, data movement, Gather
void AddActivationGradRules(std::map<std::string, GradRule>& rules);  // the Vector unary ops, PRelu, Where
void AddReduceGradRules(std::map<std::string, GradRule>& rules);      // reductions, variadic Max/Min/Sum/Mean
void AddIndexGradRules(std::map<std::string, GradRule>& rules);  // Slice, Pad, Tile, CumSum, GatherElements, TopK, ScatterND
void AddResizeGradRules(std::map<std::string, GradRule>& rules);  // Resize

}  // namespace npu::train
