// Gradient rules of the network ops: activations, Softmax/LogSoftmax, the
// normalisations, pooling, Conv, seeded dropout and the cross-entropy loss.
// Each maps onto its gradient op (server/graph/ops, ONNX Runtime's names),
// given the forward's saved values (Y, X, the mask, the log-probabilities)
// and attributes; GlobalAveragePool and Conv's bias are compositions.
#include "server/train/gradient_rules.h"

namespace npu::train {
namespace {

// The forward node's attributes, as its gradient op takes them.
Attributes Copy(const v1::Node& node) { return Attributes(node.attributes().begin(), node.attributes().end()); }

// grad_op(dY, saved) for ops whose gradient needs one saved tensor.
GradRule SavedRule(std::string grad_op, bool saved_is_output) {
  return [grad_op, saved_is_output](GradContext& c) -> absl::Status {
    const std::string& saved = saved_is_output ? c.node.outputs(0) : c.node.inputs(0);
    c.dx[0] = c.g.Add1(grad_op, {c.dy[0], saved}, Copy(c.node), c.Base());
    return absl::OkStatus();
  };
}

absl::Status LayerNormRule(GradContext& c) {
  if (c.node.outputs_size() < 3) return c.Unsupported("without its Mean and InvStdDev outputs");
  const bool bias = c.node.inputs_size() > 2 && !c.node.inputs(2).empty();
  Attributes at;
  if (auto it = c.node.attributes().find("axis"); it != c.node.attributes().end()) at["axis"] = it->second;
  const auto g = c.g.Add("LayerNormalizationGrad",
                         {c.dy[0], c.node.inputs(0), c.node.inputs(1), c.node.outputs(1), c.node.outputs(2)},
                         bias ? 3 : 2, at, c.Base());
  c.dx[0] = g[0];
  c.dx[1] = g[1];
  if (bias) c.dx[2] = g[2];
  return absl::OkStatus();
}

// Inference mode: an affine map per channel, y = (x - mean) * inv * scale + B
// with inv = (var + eps)^-1/2 from the running statistics, which take no
// gradient (a frozen BatchNorm when fine-tuning, a module in eval mode under
// autograd). Computed in x's dtype; each gradient is cast to its value's.
absl::Status InferenceBatchNormRule(GradContext& c) {
  const graph::TensorType& x = c.InputType(0);
  if (x.shape.size() < 2) return c.Unsupported("on an input without a channel dimension");
  const graph::DataType t = x.dtype;
  const int64_t channels = x.shape[1];
  graph::Shape per_channel(x.shape.size(), 1);
  per_channel[1] = channels;
  auto in_t = [&](int i) {
    const std::string& v = c.node.inputs(i);
    return c.InputType(i).dtype == t ? v : c.Op("Cast", {v}, {{"to", AttrInt(OnnxFloatCode(t))}});
  };
  auto as_input_dtype = [&](const std::string& v, int i) {
    const graph::DataType want = c.InputType(i).dtype;
    return want == t ? v : c.Op("Cast", {v}, {{"to", AttrInt(OnnxFloatCode(want))}});
  };
  std::vector<int64_t> axes;
  for (int64_t a = 0; a < static_cast<int64_t>(x.shape.size()); ++a) {
    if (a != 1) axes.push_back(a);
  }
  auto channel_sum = [&](const std::string& v) {
    return c.Op("ReduceSum", {v, c.Int64Tensor({static_cast<int64_t>(axes.size())}, axes)}, {{"keepdims", AttrInt(0)}});
  };
  const std::string inv = c.Op("Pow", {c.Op("Add", {in_t(4), c.Scalar(c.FloatAttr("epsilon", 1e-5f), t)}),
                                       c.Scalar(-0.5f, t)});
  const std::string inv_r = c.Reshape(inv, {channels}, per_channel);
  if (c.Needs(0)) {
    const std::string gain = c.Reshape(c.Op("Mul", {in_t(1), inv}), {channels}, per_channel);
    c.dx[0] = c.Op("Mul", {c.dy[0], gain});
  }
  if (c.Needs(1)) {
    const std::string centered = c.Op("Sub", {c.node.inputs(0), c.Reshape(in_t(3), {channels}, per_channel)});
    c.dx[1] = as_input_dtype(channel_sum(c.Op("Mul", {c.dy[0], c.Op("Mul", {centered, inv_r})})), 1);
  }
  if (c.Needs(2)) c.dx[2] = as_input_dtype(channel_sum(c.dy[0]), 2);
  return absl::OkStatus();
}

absl::Status BatchNormRule(GradContext& c) {
  auto mode = c.node.attributes().find("training_mode");
  if (mode == c.node.attributes().end() || mode->second.i() == 0) return InferenceBatchNormRule(c);
  Attributes at;
  if (auto it = c.node.attributes().find("epsilon"); it != c.node.attributes().end()) at["epsilon"] = it->second;
  const auto g = c.g.Add("BatchNormalizationGrad", {c.dy[0], c.node.inputs(0), c.node.inputs(1)}, 3, at, c.Base());
  c.dx[0] = g[0];
  c.dx[1] = g[1];
  c.dx[2] = g[2];
  return absl::OkStatus();
}

absl::Status PoolRule(GradContext& c, const char* grad_op) {
  c.dx[0] = c.g.Add1(grad_op, {c.dy[0], c.node.inputs(0)}, Copy(c.node), c.Base());
  return absl::OkStatus();
}

absl::Status GlobalAveragePoolRule(GradContext& c) {
  const graph::TensorType& x = c.InputType(0);
  int64_t pixels = 1;
  for (size_t d = 2; d < x.shape.size(); ++d) pixels *= x.shape[d];
  const std::string scaled = c.Scale(c.dy[0], 1.0f / static_cast<float>(pixels), x.dtype);
  const std::string shape = c.g.IntsConstant(c.Base() + "/shape", x.shape);
  c.dx[0] = c.g.Add1("Expand", {scaled, shape}, {}, c.Base() + "/expand");
  return absl::OkStatus();
}

absl::Status ConvRule(GradContext& c) {
  const bool want_x = c.Needs(0);
  if (want_x || c.Needs(1)) {
    const auto g = c.g.Add("ConvGrad", {c.dy[0], c.node.inputs(0), c.node.inputs(1)}, want_x ? 2 : 1, Copy(c.node),
                           c.Base());
    c.dx[1] = g[0];
    if (want_x) c.dx[0] = g[1];
  }
  if (c.node.inputs_size() > 2 && !c.node.inputs(2).empty() && c.Needs(2)) {
    const std::string axes = c.g.IntsConstant(c.Base() + "/bias_axes", {0, 2, 3});
    c.dx[2] = c.g.Add1("ReduceSum", {c.dy[0], axes}, {{"keepdims", AttrInt(0)}}, c.Base() + "/bias");
  }
  return absl::OkStatus();
}

absl::Status DropoutRule(GradContext& c) {
  if (c.node.outputs_size() < 2) return c.Unsupported("without its mask output");
  c.dx[0] = c.g.Add1("DropoutGrad", {c.dy[0], c.node.outputs(1), c.node.inputs(1)}, {}, c.Base());
  return absl::OkStatus();
}

absl::Status CrossEntropyRule(GradContext& c) {
  if (c.node.outputs_size() < 2) return c.Unsupported("without its log_prob output");
  if (c.Needs(2)) return c.Unsupported("with respect to class weights");
  c.dx[0] = c.g.Add1("SoftmaxCrossEntropyLossGrad", {c.dy[0], c.node.outputs(1), c.node.inputs(1)}, Copy(c.node),
                     c.Base());
  return absl::OkStatus();
}

}  // namespace

void AddNnGradRules(std::map<std::string, GradRule>& rules) {
  rules["Relu"] = SavedRule("ReluGrad", true);
  rules["Sigmoid"] = SavedRule("SigmoidGrad", true);
  rules["Tanh"] = SavedRule("TanhGrad", true);
  rules["LeakyRelu"] = SavedRule("LeakyReluGrad", false);
  rules["Gelu"] = SavedRule("GeluGrad", false);
  rules["Softmax"] = SavedRule("SoftmaxGrad", true);
  rules["LogSoftmax"] = SavedRule("LogSoftmaxGrad", true);
  rules["LayerNormalization"] = LayerNormRule;
  rules["BatchNormalization"] = BatchNormRule;
  rules["MaxPool"] = [](GradContext& c) { return PoolRule(c, "MaxPoolGrad"); };
  rules["AveragePool"] = [](GradContext& c) { return PoolRule(c, "AveragePoolGrad"); };
  rules["GlobalAveragePool"] = GlobalAveragePoolRule;
  rules["Conv"] = ConvRule;
  rules["SeededDropout"] = DropoutRule;
  rules["SoftmaxCrossEntropyLoss"] = CrossEntropyRule;
}

}  // namespace npu::train
