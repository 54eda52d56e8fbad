// Gradient rules of the network ops: activations, Softmax/LogSoftmax, the
// normalisations, pooling, Conv, ConvTranspose, LSTM, GRU, seeded dropout and
// the cross-entropy loss. Most map onto their gradient op (server/graph/ops, ONNX
// Runtime's names), given the forward's saved values (Y, X, the mask, the
// log-probabilities) and attributes; GlobalAveragePool, Conv's bias, the
// instance and group norms and ConvTranspose are compositions.
#include <algorithm>

#include "server/graph/ops/conv_geometry.h"
#include "server/train/gradient_rules.h"

namespace npu::train {
namespace {

using graph::Shape;

// The forward node's attributes, as its gradient op takes them.
Attributes Copy(const v1::Node& node) { return Attributes(node.attributes().begin(), node.attributes().end()); }

// v [N, C, ...] summed over every axis but the channels': [C].
std::string ChannelSum(GradContext& c, const std::string& v, size_t rank) {
  std::vector<int64_t> axes{0};
  for (int64_t d = 2; d < static_cast<int64_t>(rank); ++d) axes.push_back(d);
  return c.Op("ReduceSum", {v, c.Int64Tensor({static_cast<int64_t>(axes.size())}, axes)}, {{"keepdims", AttrInt(0)}});
}

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
  auto in_t = [&](int i) { return c.CastTo(c.node.inputs(i), c.InputType(i).dtype, t); };
  auto as_input_dtype = [&](const std::string& v, int i) { return c.CastTo(v, t, c.InputType(i).dtype); };
  auto channel_sum = [&](const std::string& v) { return ChannelSum(c, v, x.shape.size()); };
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

// InstanceNormalization (a group per channel) and GroupNormalization. The
// forward keeps no statistics, so they are recomputed from x, in fp32, over
// each group [N, G, M]; then the normalisation's vector-Jacobian product
// dx = inv * (dxh - mean(dxh) - xh * mean(dxh * xh)) with dxh = dy * scale,
// and scale's and bias's gradients summed per channel (per group for opset
// 18's per-group affine).
absl::Status GroupNormRule(GradContext& c, bool instance) {
  const graph::TensorType& x = c.InputType(0);
  const Shape& xs = x.shape;
  if (xs.size() < 2) return c.Unsupported("on an input without a channel dimension");
  const int64_t channels = xs[1];
  const int64_t groups = instance ? channels : c.IntAttr("num_groups", channels);
  int64_t spatial = 1;
  for (size_t d = 2; d < xs.size(); ++d) spatial *= xs[d];
  const Shape grouped{xs[0], groups, channels / groups * spatial};
  Shape by_channel(xs.size(), 1);
  by_channel[1] = channels;
  auto affine_is_per_group = [&](int i) {
    int64_t e = 1;
    for (int64_t d : c.InputType(i).shape) e *= d;
    return e != channels;
  };
  const std::string axis2 = c.Int64Tensor({1}, {2});
  auto mean = [&](const std::string& v) { return c.Op("ReduceMean", {v, axis2}, {{"keepdims", AttrInt(1)}}); };
  const std::string xr = c.Reshape(c.CastTo(c.node.inputs(0), x.dtype, v1::FLOAT32), xs, grouped);
  const std::string centered = c.Op("Sub", {xr, mean(xr)});
  const std::string var = mean(c.Op("Mul", {centered, centered}));
  const std::string eps = c.Scalar(c.FloatAttr("epsilon", 1e-5f), v1::FLOAT32);
  const std::string inv = c.Op("Pow", {c.Op("Add", {var, eps}), c.Scalar(-0.5f, v1::FLOAT32)});
  const std::string xhat = c.Op("Mul", {centered, inv});
  const std::string dy = c.CastTo(c.dy[0], x.dtype, v1::FLOAT32);
  if (c.Needs(0)) {
    std::string scale = c.CastTo(c.node.inputs(1), c.InputType(1).dtype, v1::FLOAT32);
    if (affine_is_per_group(1)) {
      scale = c.Op("Expand", {c.Reshape(scale, c.InputType(1).shape, {groups, 1}),
                              c.Int64Tensor({2}, {groups, channels / groups})});
      scale = c.Reshape(scale, {groups, channels / groups}, by_channel);
    } else {
      scale = c.Reshape(scale, c.InputType(1).shape, by_channel);
    }
    const std::string dxh = c.Reshape(c.Op("Mul", {dy, scale}), xs, grouped);
    const std::string along = c.Op("Mul", {xhat, mean(c.Op("Mul", {dxh, xhat}))});
    const std::string dx = c.Op("Mul", {inv, c.Op("Sub", {c.Op("Sub", {dxh, mean(dxh)}), along})});
    c.dx[0] = c.CastTo(c.Reshape(dx, grouped, xs), v1::FLOAT32, x.dtype);
  }
  auto affine_sum = [&](const std::string& v, int i) {
    std::string s = ChannelSum(c, v, xs.size());
    Shape summed{channels};
    if (affine_is_per_group(i)) {
      s = c.Op("ReduceSum", {c.Reshape(s, {channels}, {groups, channels / groups}), c.Int64Tensor({1}, {1})},
               {{"keepdims", AttrInt(0)}});
      summed = {groups};
    }
    return c.CastTo(c.Reshape(s, summed, c.InputType(i).shape), v1::FLOAT32, c.InputType(i).dtype);
  };
  if (c.Needs(1)) c.dx[1] = affine_sum(c.Op("Mul", {dy, c.Reshape(xhat, grouped, xs)}), 1);
  if (c.Needs(2)) c.dx[2] = affine_sum(dy, 2);
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
    c.dx[2] = ChannelSum(c, c.dy[0], c.OutputType(0).shape.size());
  }
  return absl::OkStatus();
}

// ConvTranspose is the adjoint of a Conv of its output over its input: dX =
// Conv(dY, W) with the same strides, dilations, group and begin pads (end pads
// just large enough that the Conv's output is X's extent: output_padding's
// rows reach no input), and dW is that Conv's weight gradient with X as its
// output gradient, ConvGrad(X, dY, W). A 1-D one runs as 2-D of height 1.
absl::Status ConvTransposeRule(GradContext& c) {
  const Shape& xs = c.InputType(0).shape;
  const Shape& ws = c.InputType(1).shape;
  const Shape& ys = c.OutputType(0).shape;
  const size_t sp = xs.size() - 2;
  if (sp < 1 || sp > 3) return c.Unsupported("beyond 1-D, 2-D and 3-D");
  if (sp == 3 && c.IntAttr("group", 1) != 1) return c.Unsupported("in 3-D with group > 1");
  const std::vector<int64_t> ones(sp, 1), zeros(sp, 0);
  const std::vector<int64_t> strides = c.IntsAttr("strides", ones);
  const std::vector<int64_t> dilations = c.IntsAttr("dilations", ones);
  const std::vector<int64_t> output_padding = c.IntsAttr("output_padding", zeros);
  auto begin_pads = graph::ops::ConvTransposeBeginPads(c.node, xs, ws);  // pads, auto_pad or output_shape
  if (!begin_pads.ok()) return begin_pads.status();
  // 2-D attributes: a 1-D transposed convolution gets a unit height first.
  std::vector<int64_t> conv_strides, conv_dilations, kernel, begin, end;
  if (sp == 1) {
    conv_strides = conv_dilations = kernel = {1};
    begin = end = {0};
  }
  for (size_t i = 0; i < sp; ++i) {
    const int64_t s = strides[i], in = xs[2 + i], out = ys[2 + i];
    const int64_t span = dilations[i] * (ws[2 + i] - 1) + 1;
    const int64_t pb = (*begin_pads)[i];
    const int64_t pe = s * (in - 1) + output_padding[i] + span - out - pb;
    if (pb < 0 || pe < 0) return c.Unsupported("with an output larger than its input reaches (negative pads)");
    conv_strides.push_back(s);
    conv_dilations.push_back(dilations[i]);
    kernel.push_back(ws[2 + i]);
    begin.push_back(pb);
    end.push_back(std::max<int64_t>(0, pe - output_padding[i]));
  }
  std::vector<int64_t> conv_pads = begin;
  conv_pads.insert(conv_pads.end(), end.begin(), end.end());
  const Attributes conv{{"strides", AttrInts(conv_strides)},
                        {"dilations", AttrInts(conv_dilations)},
                        {"kernel_shape", AttrInts(kernel)},
                        {"pads", AttrInts(conv_pads)},
                        {"group", AttrInt(c.IntAttr("group", 1))}};
  auto planar = [&](const Shape& s) {
    Shape t = s;
    if (sp == 1) t.insert(t.begin() + 2, 1);
    return t;
  };
  const std::string dy = c.Reshape(c.dy[0], ys, planar(ys));
  const std::string w = c.Reshape(c.node.inputs(1), ws, planar(ws));
  if (c.Needs(0)) c.dx[0] = c.Reshape(c.Op("Conv", {dy, w}, conv), planar(xs), xs);
  if (c.Needs(1)) {
    const std::string x = c.Reshape(c.node.inputs(0), xs, planar(xs));
    c.dx[1] = c.Reshape(c.g.Add1("ConvGrad", {x, dy, w}, conv, c.Base()), planar(ws), ws);
  }
  if (c.Has(2) && c.Needs(2)) c.dx[2] = ChannelSum(c, c.dy[0], ys.size());
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
  std::vector<std::string> inputs = {c.dy[0], c.node.outputs(1), c.node.inputs(1)};
  if (c.node.inputs_size() > 2 && !c.node.inputs(2).empty()) inputs.push_back(c.node.inputs(2));  // class weights
  c.dx[0] = c.g.Add1("SoftmaxCrossEntropyLossGrad", inputs, Copy(c.node), c.Base());
  return absl::OkStatus();
}

// LSTM and GRU: one gradient op each (server/graph/ops/rnn_grad.h), given the
// forward's inputs at their positions ("" where omitted) and then its
// outputs' gradients. Its outputs are the gradients of X, W, R, B, then of
// the inputs after sequence_lens; the node names those up to the last needed.
absl::Status RecurrentRule(GradContext& c, const char* grad_op, int forward_inputs) {
  std::vector<std::string> inputs(static_cast<size_t>(forward_inputs));
  for (int i = 0; i < c.node.inputs_size() && i < forward_inputs; ++i) inputs[i] = c.node.inputs(i);
  inputs.insert(inputs.end(), c.dy.begin(), c.dy.end());
  while (inputs.back().empty()) inputs.pop_back();  // trailing omitted ones need no place (X never is)
  constexpr int kSequenceLens = 4;
  auto output_of = [](int input) { return input < kSequenceLens ? input : input - 1; };
  int outputs = 1;
  for (int i = 0; i < c.node.inputs_size(); ++i) {
    if (i != kSequenceLens && c.Needs(i)) outputs = std::max(outputs, output_of(i) + 1);
  }
  const auto g = c.g.Add(grad_op, inputs, outputs, Copy(c.node), c.Base());
  for (int i = 0; i < c.node.inputs_size(); ++i) {
    if (i != kSequenceLens && c.Needs(i)) c.dx[i] = g[output_of(i)];
  }
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
  rules["LpPool"] = [](GradContext& c) { return PoolRule(c, "LpPoolGrad"); };
  rules["AveragePool"] = [](GradContext& c) { return PoolRule(c, "AveragePoolGrad"); };
  rules["GlobalAveragePool"] = GlobalAveragePoolRule;
  rules["Conv"] = ConvRule;
  rules["ConvTranspose"] = ConvTransposeRule;
  rules["InstanceNormalization"] = [](GradContext& c) { return GroupNormRule(c, true); };
  rules["GroupNormalization"] = [](GradContext& c) { return GroupNormRule(c, false); };
  rules["SeededDropout"] = DropoutRule;
  rules["SoftmaxCrossEntropyLoss"] = CrossEntropyRule;
  rules["LSTM"] = [](GradContext& c) { return RecurrentRule(c, "LSTMGrad", 8); };
  rules["GRU"] = [](GradContext& c) { return RecurrentRule(c, "GRUGrad", 6); };
}

}  // namespace npu::train
