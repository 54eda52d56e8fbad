#include "onnx/supported_ops.h"

namespace npu::onnxio {

namespace {

using OpAttributes = std::map<std::string, std::set<std::string>>;

const OpAttributes& StandardOps() {
  static const auto* ops = new OpAttributes{
      {"Abs", {}}, {"Add", {}}, {"And", {}}, {"ArgMax", {"axis", "keepdims", "select_last_index"}}, {"ArgMin", {"axis", "keepdims", "select_last_index"}},
      {"AveragePool", {"kernel_shape", "strides", "pads", "dilations", "ceil_mode", "auto_pad", "count_include_pad"}},
      {"BatchNormalization", {"epsilon", "momentum", "training_mode", "spatial"}},
      {"Cast", {"to", "saturate"}}, {"CastLike", {"saturate"}}, {"Ceil", {}}, {"Celu", {"alpha"}}, {"Clip", {}}, {"Concat", {"axis"}},
      {"ConstantOfShape", {"value"}},
      {"Constant", {"value", "value_float", "value_floats", "value_int", "value_ints"}},
      {"Conv", {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"}},
      {"ConvTranspose",
       {"auto_pad", "dilations", "group", "kernel_shape", "output_padding", "output_shape", "pads", "strides"}},
      {"Cos", {}}, {"Einsum", {"equation"}},
      {"LSTM", {"clip", "direction", "hidden_size", "input_forget", "layout"}},
      {"GRU", {"clip", "direction", "hidden_size", "layout", "linear_before_reset"}}, {"CumSum", {"exclusive", "reverse"}}, {"DepthToSpace", {"blocksize", "mode"}}, {"Div", {}}, {"Elu", {"alpha"}}, {"Dropout", {"seed"}}, {"Equal", {}}, {"Erf", {}}, {"Exp", {}}, {"Expand", {}},
      {"Flatten", {"axis"}}, {"Floor", {}}, {"Gather", {"axis"}}, {"GatherElements", {"axis"}}, {"Gelu", {"approximate"}},
      {"Gemm", {"alpha", "beta", "transA", "transB"}}, {"GlobalAveragePool", {}}, {"Greater", {}},
      {"GreaterOrEqual", {}}, {"GroupNormalization", {"epsilon", "num_groups", "stash_type"}},
      {"HardSigmoid", {"alpha", "beta"}}, {"HardSwish", {}}, {"Hardmax", {"axis"}}, {"Identity", {}}, {"InstanceNormalization", {"epsilon"}},
      {"LayerNormalization", {"axis", "epsilon", "stash_type"}}, {"LeakyRelu", {"alpha"}}, {"Less", {}},
      {"LessOrEqual", {}},
      {"Log", {}}, {"LogSoftmax", {"axis"}}, {"MatMul", {}}, {"Max", {}}, {"Mean", {}},
      {"MaxPool", {"kernel_shape", "strides", "pads", "dilations", "ceil_mode", "auto_pad", "storage_order"}},
      {"LpPool", {"kernel_shape", "strides", "pads", "dilations", "ceil_mode", "auto_pad", "p"}},
      {"Min", {}}, {"Mish", {}}, {"Mod", {"fmod"}}, {"Mul", {}}, {"Neg", {}}, {"Not", {}}, {"Or", {}}, {"PRelu", {}}, {"Pad", {"mode"}}, {"Pow", {}}, {"Range", {}}, {"Reciprocal", {}},
      {"ReduceMax", {"axes", "keepdims", "noop_with_empty_axes"}},
      {"ReduceMean", {"axes", "keepdims", "noop_with_empty_axes"}},
      {"ReduceMin", {"axes", "keepdims", "noop_with_empty_axes"}},
      {"ReduceSum", {"axes", "keepdims", "noop_with_empty_axes"}},
      {"ReduceProd", {"axes", "keepdims", "noop_with_empty_axes"}},
      {"ReduceL1", {"axes", "keepdims", "noop_with_empty_axes"}},
      {"ReduceL2", {"axes", "keepdims", "noop_with_empty_axes"}},
      {"ReduceSumSquare", {"axes", "keepdims", "noop_with_empty_axes"}},
      {"ReduceLogSumExp", {"axes", "keepdims", "noop_with_empty_axes"}}, {"ReduceLogSum", {"axes", "keepdims", "noop_with_empty_axes"}}, {"Relu", {}}, {"Round", {}}, {"Selu", {"alpha", "gamma"}}, {"Sign", {}}, {"Softplus", {}},
      {"Resize", {"mode", "coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a", "exclude_outside",
                  "extrapolation_value", "antialias", "axes", "keep_aspect_ratio_policy"}}, {"Reshape", {"allowzero"}}, {"ScatterND", {"reduction"}},
      {"Shape", {"start", "end"}}, {"Size", {}}, {"Sigmoid", {}}, {"Silu", {}}, {"Sin", {}}, {"Slice", {}}, {"Softmax", {"axis"}}, {"SpaceToDepth", {"blocksize"}},
      {"Split", {"axis", "split", "num_outputs"}}, {"Sqrt", {}}, {"Squeeze", {"axes"}}, {"Sub", {}}, {"Sum", {}},
      {"Tanh", {}}, {"Tile", {}}, {"TopK", {"axis", "largest", "sorted"}}, {"Trilu", {"upper"}}, {"Transpose", {"perm"}}, {"Unsqueeze", {"axes"}}, {"Where", {}}, {"Xor", {}},
      {"SoftmaxCrossEntropyLoss", {"reduction", "ignore_index"}}, {"NegativeLogLikelihoodLoss", {"reduction", "ignore_index"}},
  };
  return *ops;
}

// ONNX Runtime's names for the gradients, and the update and NPU ops, as training graphs hold them.
const OpAttributes& TrainingOps() {
  static const auto* ops = new OpAttributes{
      {"AveragePoolGrad", {"kernel_shape", "strides", "pads", "dilations", "ceil_mode", "auto_pad", "count_include_pad"}},
      {"BatchNormalizationGrad", {"epsilon", "momentum", "training_mode", "spatial"}},
      {"ConvGrad", {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"}},
      {"LSTMGrad", {"clip", "direction", "hidden_size", "input_forget", "layout"}},
      {"GRUGrad", {"clip", "direction", "hidden_size", "layout", "linear_before_reset"}},
      {"DropoutGrad", {}}, {"GatherGrad", {"axis"}}, {"GeluGrad", {"approximate"}},
      {"LayerNormalizationGrad", {"axis", "epsilon", "stash_type"}}, {"LeakyReluGrad", {"alpha"}},
      {"LogSoftmaxGrad", {"axis"}},
      {"MaxPoolGrad", {"kernel_shape", "strides", "pads", "dilations", "ceil_mode", "auto_pad", "storage_order"}},
      {"LpPoolGrad", {"kernel_shape", "strides", "pads", "dilations", "ceil_mode", "auto_pad", "p"}},
      {"ReluGrad", {}}, {"SeededDropout", {}}, {"SigmoidGrad", {}}, {"SoftmaxCrossEntropyLossGrad", {"reduction", "ignore_index"}},
      {"SoftmaxGrad", {"axis"}}, {"TanhGrad", {}},
      {"SGDUpdate", {"momentum", "weight_decay", "nesterov"}},
      {"AdamUpdate", {"beta1", "beta2", "epsilon", "weight_decay", "decoupled"}}, {"NPUGetFloatStatus", {}}, {"HcclAllReduce", {}},
  };
  return *ops;
}

}  // namespace

const std::map<std::string, std::set<std::string>>& SupportedOps() {
  static const auto* ops = [] {
    auto* all = new OpAttributes(StandardOps());
    all->insert(TrainingOps().begin(), TrainingOps().end());
    return all;
  }();
  return *ops;
}

bool IsTrainingOp(const std::string& op_type) { return TrainingOps().contains(op_type); }

}  // namespace npu::onnxio
