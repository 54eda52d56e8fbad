#include "server/device/vector_passes.h"

#include <iterator>

#include "absl/strings/str_cat.h"

namespace npu::device {
namespace {

using K = VectorKernel;

constexpr VectorPassEntry kTable[] = {
    {K::kAdd, "Add", 1, "one vadd"},
    {K::kSub, "Sub", 1, "one vsub"},
    {K::kMul, "Mul", 1, "one vmul"},
    {K::kDiv, "Div", 2, "vdiv takes two passes"},
    {K::kPow, "Pow", 9, "log (4) + mul + exp (4)"},
    {K::kMax, "Max", 1, "one vmax"},
    {K::kMin, "Min", 1, "one vmin"},
    {K::kCompare, "Equal, Less, LessOrEqual, Greater, GreaterOrEqual", 1, "one vcmp"},
    {K::kRelu, "Relu", 1, "one vrelu"},
    {K::kNeg, "Neg", 1, "one vmuls by -1"},
    {K::kAbs, "Abs", 1, "one vabs"},
    {K::kSqrt, "Sqrt", 2, "vsqrt takes two passes"},
    {K::kReciprocal, "Reciprocal", 2, "vrec takes two passes"},
    {K::kExp, "Exp", 4, "range reduction + polynomial + scale"},
    {K::kLog, "Log", 4, "range reduction + polynomial + scale"},
    {K::kErf, "Erf", 8, "rational approximation"},
    {K::kSigmoid, "Sigmoid", 6, "exp (4) + add + reciprocal"},
    {K::kTanh, "Tanh", 7, "exp (4) + add, sub, div"},
    {K::kSilu, "Silu", 7, "sigmoid (6) + mul"},
    {K::kGeluErf, "Gelu", 10, "erf (8) + mul + add"},
    {K::kGeluTanh, "Gelu (approximate=tanh)", 11, "tanh (7) + cube, mul, add, mul"},
    {K::kSin, "Sin", 6, "range reduction (2) + sin and cos polynomials (3) + quadrant select"},
    {K::kCos, "Cos", 6, "range reduction (2) + sin and cos polynomials (3) + quadrant select"},
    {K::kLeakyRelu, "LeakyRelu", 2, "vmuls + vmax"},
    {K::kHardSigmoid, "HardSigmoid", 3, "vmuls + vadds + clamp"},
    {K::kClip, "Clip", 2, "vmaxs + vmins"},
    {K::kFloor, "Floor", 2, "vconv toward zero + a compare-select step"},
    {K::kCeil, "Ceil", 2, "vconv toward zero + a compare-select step"},
    {K::kRound, "Round", 1, "one vconv to nearest even"},
    {K::kSign, "Sign", 2, "two compare-selects"},
    {K::kHardSwish, "HardSwish", 4, "vadds + clamp + vmul + vmuls by 1/6"},
    {K::kSoftplus, "Softplus", 10, "exp (4) + add + ln (4) + div"},
    {K::kMish, "Mish", 18, "softplus (10) + tanh (7) + mul"},
    {K::kElu, "Elu", 6, "expm1: exp (4) + sub, then vmuls + select"},
    {K::kSelu, "Selu", 7, "expm1 (5) + two vmuls + select"},
    {K::kCelu, "Celu", 7, "vmuls by 1/alpha + expm1 (5) + vmuls + select"},
    {K::kPRelu, "PRelu", 2, "vmul + select"},
    {K::kFmod, "Mod (fmod = 1)", 4, "div + trunc + multiply-subtract"},
    {K::kMod, "Mod (fmod = 0)", 5, "fmod (4) + sign fix-up"},
    {K::kSelect, "Where", 1, "one vsel"},
    {K::kCast, "Cast", 1, "one vconv"},
    {K::kScaleAndAdd, "Gemm alpha/beta", 2, "vmuls + vaxpy"},
    {K::kBatchNormAffine, "BatchNormalization", 2, "x * a + b with per-channel a, b: vmuls + vadds"},
    {K::kLayerNormRow, "Layer/Instance/GroupNormalization row", 7,
     "Welford statistics in one pass (sub, mul-add, sub, mul-add), then centre, scale, affine"},
    {K::kSoftmaxRow, "Softmax row", 8, "one online pass: max, subtract + exp (5), sum; one write pass: scale"},
    {K::kReduce, "ReduceSum/Max/Min/Mean", 1, "one vadd/vmax/vmin per element"},
    {K::kPoolTap, "MaxPool/AveragePool, per window tap", 1, "one vmax/vadd per tap"},
    {K::kBiasAdd, "Conv bias (coupled cores)", 1, "one vadd on the fp32 accumulators"},
    {K::kConvTap, "Conv with group > 1, per input channel and tap", 1, "one vmla (multiply-add) per tap"},
    {K::kReluGrad, "ReluGrad", 2, "vcmp + vsel"},
    {K::kLeakyReluGrad, "LeakyReluGrad", 3, "vcmp + vmuls + vsel"},
    {K::kSigmoidGrad, "SigmoidGrad", 3, "dy * y * (1 - y): vsub + two vmul"},
    {K::kTanhGrad, "TanhGrad", 4, "dy * (1 - y)(1 + y): vsub + vadd + two vmul"},
    {K::kGeluErfGrad, "GeluGrad", 16, "erf (8) + exp (4) + four mul/add"},
    {K::kGeluTanhGrad, "GeluGrad (approximate=tanh)", 15, "tanh (7) + the derivative's eight mul/add"},
    {K::kSoftmaxGradRow, "SoftmaxGrad row", 4, "mul + sum, sub, mul"},
    {K::kLogSoftmaxGradRow, "LogSoftmaxGrad row", 7, "sum, exp (4), mul, sub"},
    {K::kLayerNormGradRow, "LayerNormalizationGrad row", 10, "xhat (2), dy * scale, two sums (3), the result (4)"},
    {K::kNormParamGrad, "LayerNormalizationGrad scale/bias sums", 5, "xhat (2), mul, two vadd"},
    {K::kBatchNormTraining, "BatchNormalization, training", 5, "sum; sub + square + sum (statistics); mul + add"},
    {K::kBatchNormGrad, "BatchNormalizationGrad", 12, "statistics (3), the two sums (4), the result (5)"},
    {K::kCrossEntropyRow, "SoftmaxCrossEntropyLoss row", 9, "log-softmax (max, sub + exp (5), sum, log) + pick"},
    {K::kCrossEntropyGradRow, "SoftmaxCrossEntropyLossGrad row", 6, "exp (4), sub, mul"},
    {K::kDropout, "SeededDropout", 4, "random bits, compare, select, scale"},
    {K::kDropoutGrad, "DropoutGrad", 2, "mask select + scale"},
    {K::kAccumulate, "Gradient sums (ConvGrad dW, col2im, GatherGrad)", 1, "one vadd into fp32"},
    {K::kSgdUpdate, "SGDUpdate (with momentum)", 5, "unscale, decay, momentum (2), update"},
    {K::kAdamUpdate, "AdamUpdate", 12, "unscale, decay, two moments (5), sqrt (2), div (2), update"},
    {K::kResizeLinearTap, "Resize (linear), per interpolated axis", 3, "two vmuls by the weights + vadd"},
    {K::kLogic, "Not, And, Or, Xor", 1, "one vnot/vand/vor/vxor on the mask bytes"},
    {K::kReduceSquares, "ReduceL2/ReduceSumSquare", 2, "vmul + vadd per element (L2: one sqrt per output)"},
    {K::kReduceLogSumExp, "ReduceLogSumExp", 7, "max pass (1), then subtract + exp (5) + add"},
};

}  // namespace

const VectorPassEntry* VectorPassTable(int* size) {
  *size = static_cast<int>(std::size(kTable));
  return kTable;
}

int VectorPasses(VectorKernel k) {
  for (const VectorPassEntry& e : kTable) {
    if (e.kernel == k) return e.passes;
  }
  return 1;  // cannot happen: every kernel has a row (tests/device/vector_passes_test.cc)
}

VectorKernel KernelOf(kernels::UnaryOp op) {
  switch (op) {
    case kernels::UnaryOp::kRelu: return K::kRelu;
    case kernels::UnaryOp::kNeg: return K::kNeg;
    case kernels::UnaryOp::kAbs: return K::kAbs;
    case kernels::UnaryOp::kSqrt: return K::kSqrt;
    case kernels::UnaryOp::kReciprocal: return K::kReciprocal;
    case kernels::UnaryOp::kExp: return K::kExp;
    case kernels::UnaryOp::kLog: return K::kLog;
    case kernels::UnaryOp::kErf: return K::kErf;
    case kernels::UnaryOp::kSigmoid: return K::kSigmoid;
    case kernels::UnaryOp::kTanh: return K::kTanh;
    case kernels::UnaryOp::kSilu: return K::kSilu;
    case kernels::UnaryOp::kGeluErf: return K::kGeluErf;
    case kernels::UnaryOp::kGeluTanh: return K::kGeluTanh;
    case kernels::UnaryOp::kSin: return K::kSin;
    case kernels::UnaryOp::kCos: return K::kCos;
    case kernels::UnaryOp::kLeakyRelu: return K::kLeakyRelu;
    case kernels::UnaryOp::kHardSigmoid: return K::kHardSigmoid;
    case kernels::UnaryOp::kClip: return K::kClip;
    case kernels::UnaryOp::kFloor: return K::kFloor;
    case kernels::UnaryOp::kCeil: return K::kCeil;
    case kernels::UnaryOp::kRound: return K::kRound;
    case kernels::UnaryOp::kSign: return K::kSign;
    case kernels::UnaryOp::kHardSwish: return K::kHardSwish;
    case kernels::UnaryOp::kSoftplus: return K::kSoftplus;
    case kernels::UnaryOp::kMish: return K::kMish;
    case kernels::UnaryOp::kElu: return K::kElu;
    case kernels::UnaryOp::kSelu: return K::kSelu;
    case kernels::UnaryOp::kCelu: return K::kCelu;
  }
  return K::kRelu;
}

VectorKernel KernelOf(kernels::BinaryOp op) {
  switch (op) {
    case kernels::BinaryOp::kAdd: return K::kAdd;
    case kernels::BinaryOp::kSub: return K::kSub;
    case kernels::BinaryOp::kMul: return K::kMul;
    case kernels::BinaryOp::kDiv: return K::kDiv;
    case kernels::BinaryOp::kPow: return K::kPow;
    case kernels::BinaryOp::kMax: return K::kMax;
    case kernels::BinaryOp::kMin: return K::kMin;
    case kernels::BinaryOp::kEqual:
    case kernels::BinaryOp::kLess:
    case kernels::BinaryOp::kGreater: return K::kCompare;
    case kernels::BinaryOp::kPRelu: return K::kPRelu;
    case kernels::BinaryOp::kFmod: return K::kFmod;
    case kernels::BinaryOp::kMod: return K::kMod;
  }
  return K::kAdd;
}

std::string VectorPassesMarkdown() {
  std::string md = "| kernel | passes | why |\n|---|---|---|\n";
  for (const VectorPassEntry& e : kTable) absl::StrAppend(&md, "| ", e.name, " | ", e.passes, " | ", e.why, " |\n");
  return md;
}

}  // namespace npu::device
