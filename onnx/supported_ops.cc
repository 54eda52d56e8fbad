#include "onnx/supported_ops.h"

namespace npu::onnxio {

const std::map<std::string, std::set<std::string>>& SupportedOps() {
  static const auto* ops = new std::map<std::string, std::set<std::string>>{
      {"Abs", {}}, {"Add", {}}, {"ArgMax", {"axis", "keepdims", "select_last_index"}},
      {"AveragePool", {"kernel_shape", "strides", "pads", "dilations", "ceil_mode", "auto_pad", "count_include_pad"}},
      {"BatchNormalization", {"epsilon", "momentum", "training_mode", "spatial"}},
      {"Cast", {"to", "saturate"}}, {"Clip", {}}, {"Concat", {"axis"}},
      {"Constant", {"value", "value_float", "value_floats", "value_int", "value_ints"}},
      {"Conv", {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"}},
      {"Cos", {}}, {"Div", {}}, {"Dropout", {"seed"}}, {"Equal", {}}, {"Erf", {}}, {"Exp", {}}, {"Expand", {}},
      {"Flatten", {"axis"}}, {"Gather", {"axis"}}, {"Gelu", {"approximate"}},
      {"Gemm", {"alpha", "beta", "transA", "transB"}}, {"GlobalAveragePool", {}}, {"Greater", {}},
      {"GreaterOrEqual", {}}, {"GroupNormalization", {"epsilon", "num_groups", "stash_type"}},
      {"HardSigmoid", {"alpha", "beta"}}, {"Identity", {}}, {"InstanceNormalization", {"epsilon"}},
      {"LayerNormalization", {"axis", "epsilon", "stash_type"}}, {"LeakyRelu", {"alpha"}}, {"Less", {}},
      {"LessOrEqual", {}},
      {"Log", {}}, {"LogSoftmax", {"axis"}}, {"MatMul", {}}, {"Max", {}},
      {"MaxPool", {"kernel_shape", "strides", "pads", "dilations", "ceil_mode", "auto_pad", "storage_order"}},
      {"Min", {}}, {"Mul", {}}, {"Neg", {}}, {"Pow", {}}, {"Reciprocal", {}},
      {"ReduceMax", {"axes", "keepdims", "noop_with_empty_axes"}},
      {"ReduceMean", {"axes", "keepdims", "noop_with_empty_axes"}},
      {"ReduceMin", {"axes", "keepdims", "noop_with_empty_axes"}},
      {"ReduceSum", {"axes", "keepdims", "noop_with_empty_axes"}}, {"Relu", {}}, {"Reshape", {"allowzero"}},
      {"Shape", {"start", "end"}}, {"Sigmoid", {}}, {"Silu", {}}, {"Sin", {}}, {"Slice", {}}, {"Softmax", {"axis"}},
      {"Split", {"axis", "split", "num_outputs"}}, {"Sqrt", {}}, {"Squeeze", {"axes"}}, {"Sub", {}},
      {"Tanh", {}}, {"Transpose", {"perm"}}, {"Unsqueeze", {"axes"}}, {"Where", {}},
      {"SoftmaxCrossEntropyLoss", {"reduction", "ignore_index"}},
      // Training ops (ONNX Runtime's names for the gradients), as training graphs hold them.
      {"AveragePoolGrad", {"kernel_shape", "strides", "pads", "dilations", "ceil_mode", "auto_pad", "count_include_pad"}},
      {"BatchNormalizationGrad", {"epsilon", "momentum", "training_mode", "spatial"}},
      {"ConvGrad", {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"}},
      {"DropoutGrad", {}}, {"GatherGrad", {"axis"}}, {"GeluGrad", {"approximate"}},
      {"LayerNormalizationGrad", {"axis", "epsilon", "stash_type"}}, {"LeakyReluGrad", {"alpha"}},
      {"LogSoftmaxGrad", {"axis"}},
      {"MaxPoolGrad", {"kernel_shape", "strides", "pads", "dilations", "ceil_mode", "auto_pad", "storage_order"}},
      {"ReluGrad", {}}, {"SeededDropout", {}}, {"SigmoidGrad", {}}, {"SoftmaxCrossEntropyLossGrad", {"reduction", "ignore_index"}},
      {"SoftmaxGrad", {"axis"}}, {"TanhGrad", {}},
      {"SGDUpdate", {"momentum", "weight_decay", "nesterov"}},
      {"AdamUpdate", {"beta1", "beta2", "epsilon", "weight_decay", "decoupled"}}, {"NPUGetFloatStatus", {}}, {"HcclAllReduce", {}},
  };
  return *ops;
}

}  // namespace npu::onnxio
