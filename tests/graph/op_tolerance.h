// The tolerance each op is held to against an independent reference (torch,
// NumPy, ONNX's conformance data): the table docs/ops.md states, each row with
// its reason. Integer and BOOL outputs are always exact.
#pragma once

#include <map>
#include <string>

namespace npu::graph {

// |got - ref| <= atol + rtol * |ref|, per output dtype.
struct Tolerance {
  double atol32, rtol32, atol16, rtol16;
  const char* why;
};

constexpr Tolerance kExact{0, 0, 0, 0, "moves or selects elements: bit-exact"};
constexpr Tolerance kIeee{0, 1e-6, 0, 1e-3,
                          "IEEE op in fp32, rounded once: equal to torch's fp32 result; fp16 within 1 ulp"};
constexpr Tolerance kTranscendental{1e-6, 1e-5, 1e-5, 2e-3,
                                    "the Vector kernels' polynomials (<= 3 fp32 ulp, docs/ops.md) vs torch's "
                                    "vectorised fp32; fp16 within the contract's 2 ulp"};
constexpr Tolerance kReduction{1e-5, 1e-5, 2e-3, 2e-3,
                               "fp32 sums in index order vs torch's pairwise/vectorised order; fp16 2 ulp"};
constexpr Tolerance kRowNorm{1e-5, 1e-5, 2e-3, 2e-3,
                             "max/exp/sum (or mean/var) in fp32, summation order differs from torch; fp16 2 ulp"};
constexpr Tolerance kInterpolate{1.5e-6, 0, 0, 1e-3,
                                 "linear Resize: fp32 taps and weights, t0 * w0 + t1 * w1 per axis; on inputs in "
                                 "[-3, 3] ours is within 0.4e-6 of the float64 interpolation with the same weights "
                                 "and torch's within 1.1e-6 (its weights round differently): both within 4 fp32 ulp; "
                                 "fp16 rounded once, 1 ulp"};
constexpr Tolerance kCube{1e-5, 1e-5, 1e-3, 1e-3,
                          "reference rounds operands to fp16 (as the Cube does; not for a grouped Conv, which runs "
                          "on the Vector unit in fp32) and sums in float64: left is fp32 accumulation order; fp16 "
                          "output 1 ulp"};
constexpr Tolerance kOptimizer{1e-6, 1e-5, 0, 0,
                               "up to ten fp32 operations (sqrt, division; the momentum sums may cancel) "
                               "against torch.optim in float64: a few ulp of the operands"};

constexpr Tolerance kRecurrent{1e-4, 1e-4, 1e-3, 1e-3,
                               "as the Cube's: the reference rounds each GEMM's operands (x, W, R, every step's h) "
                               "to fp16 and runs the recurrence in float64; the gates in fp32. fp32: a step's h "
                               "whose fp32 and float64 values round to fp16 on either side of a tie moves that "
                               "operand one fp16 ulp, and the steps after carry it (up to ~1e-4 on these shapes)"};

constexpr Tolerance kRecurrentGrad{1e-4, 1e-4, 1e-3, 1e-3,
                                   "the same reference under torch.autograd, the Cube's gradients (dA) rounded to "
                                   "fp16 as its operands; the gates' gradients in fp32 against float64; fp32 as "
                                   "LSTM's (a rounding tie of h or dA)"};

inline const std::map<std::string, Tolerance>& ToleranceTable() {
  static const auto* table = new std::map<std::string, Tolerance>{
      {"Abs", kExact}, {"Neg", kExact}, {"Relu", kExact}, {"Max", kExact}, {"Min", kExact},
      {"Equal", kExact}, {"Less", kExact}, {"LessOrEqual", kExact}, {"Greater", kExact},
      {"GreaterOrEqual", kExact}, {"Where", kExact}, {"Cast", kExact}, {"CastLike", kExact},
      {"Clip", kExact}, {"MaxPool", kExact}, {"ReduceMax", kExact}, {"ReduceMin", kExact}, {"ArgMax", kExact}, {"ArgMin", kExact},
      {"Transpose", kExact}, {"Reshape", kExact}, {"Flatten", kExact}, {"Squeeze", kExact},
      {"Unsqueeze", kExact}, {"Concat", kExact}, {"Split", kExact}, {"Slice", kExact}, {"Gather", kExact},
      {"Expand", kExact}, {"Identity", kExact}, {"Dropout", kExact}, {"Constant", kExact}, {"Shape", kExact}, {"Size", kExact},
      {"Pad", kExact}, {"Tile", kExact}, {"ConstantOfShape", kExact}, {"Range", kExact},
      {"Resize", kInterpolate},
      {"Floor", kExact}, {"Ceil", kExact}, {"Round", kExact}, {"Sign", kExact}, {"Not", kExact}, {"And", kExact},
      {"Or", kExact}, {"Xor", kExact}, {"HardSwish", kIeee}, {"PRelu", kIeee}, {"Mod", kIeee}, {"Sum", kIeee},
      {"Mean", kIeee}, {"Softplus", kTranscendental}, {"Mish", kTranscendental}, {"Elu", kTranscendental},
      {"Selu", kTranscendental}, {"Celu", kTranscendental},
      {"ReduceProd", kReduction}, {"ReduceL1", kReduction}, {"ReduceL2", kReduction},
      {"ReduceSumSquare", kReduction}, {"ReduceLogSumExp", kReduction}, {"ReduceLogSum", kReduction}, {"CumSum", kIeee}, {"Trilu", kExact},
      {"GatherElements", kExact}, {"ScatterND", kIeee}, {"DepthToSpace", kExact}, {"SpaceToDepth", kExact},
      {"TopK", kExact}, {"Hardmax", kExact},
      {"Add", kIeee}, {"Sub", kIeee}, {"Mul", kIeee}, {"Div", kIeee}, {"Sqrt", kIeee}, {"Reciprocal", kIeee},
      {"LeakyRelu", kIeee}, {"HardSigmoid", kIeee},
      {"Pow", kTranscendental}, {"Exp", kTranscendental}, {"Log", kTranscendental}, {"Erf", kTranscendental},
      {"Sigmoid", kTranscendental}, {"Tanh", kTranscendental}, {"Silu", kTranscendental},
      {"Gelu", kTranscendental}, {"Sin", kTranscendental}, {"Cos", kTranscendental},
      {"ReduceSum", kReduction}, {"ReduceMean", kReduction}, {"AveragePool", kReduction}, {"LpPool", kTranscendental},
      {"GlobalAveragePool", kReduction},
      {"Softmax", kRowNorm}, {"LogSoftmax", kRowNorm}, {"LayerNormalization", kRowNorm},
      {"BatchNormalization", kRowNorm}, {"InstanceNormalization", kRowNorm}, {"GroupNormalization", kRowNorm},
      {"MatMul", kCube}, {"Gemm", kCube}, {"Conv", kCube}, {"ConvTranspose", kCube}, {"Einsum", kCube}, {"LSTM", kRecurrent}, {"GRU", kRecurrent},
      // Training ops: references from torch.autograd in float64, rounded once.
      {"ReluGrad", kExact}, {"LeakyReluGrad", kIeee}, {"SigmoidGrad", kIeee}, {"TanhGrad", kIeee},
      {"GeluGrad", kTranscendental}, {"SoftmaxGrad", kRowNorm}, {"LogSoftmaxGrad", kRowNorm},
      {"LayerNormalizationGrad", kRowNorm}, {"BatchNormalizationGrad", kRowNorm},
      {"MaxPoolGrad", kReduction}, {"AveragePoolGrad", kReduction}, {"LpPoolGrad", kTranscendental}, {"ConvGrad", kCube}, {"GatherGrad", kReduction},
      {"LSTMGrad", kRecurrentGrad}, {"GRUGrad", kRecurrentGrad},
      {"SeededDropout", kIeee}, {"DropoutGrad", kIeee},
      {"SoftmaxCrossEntropyLoss", kRowNorm}, {"NegativeLogLikelihoodLoss", kRowNorm}, {"SoftmaxCrossEntropyLossGrad", kRowNorm},
      {"SGDUpdate", kOptimizer}, {"AdamUpdate", kOptimizer}, {"NPUGetFloatStatus", kExact}, {"HcclAllReduce", kExact},
  };
  return *table;
}

}  // namespace npu::graph
