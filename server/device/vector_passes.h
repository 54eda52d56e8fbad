// How many full passes of the Vector unit over its operands one element of a
// kernel op costs: the `passes` argument of VectorChunkWork
// (server/graph/vector_tiling.h). The one table of them: the ops read it
// (VectorPasses) and docs/device-model.md prints it (VectorPassesMarkdown,
// held equal by a test). Keyed by the kernel op that runs, not by ONNX name:
// Gelu with approximate=tanh is another kernel than Gelu.
//
// Simple arithmetic is one instruction (one pass). Transcendentals are built
// by the Vector unit from several instructions (range reduction, a polynomial
// or table step, reconstruction), so they cost more passes. Huawei does not
// publish per-instruction latencies: the counts are the model's assumptions (a
// count of the elementary steps of a textbook implementation), part of the
// model version. A kernel whose real instruction count changes updates its row.
#pragma once

#include <string>

#include "kernels/vector_math.h"

namespace npu::device {

enum class VectorKernel {
  // kernels::BinaryOp
  kAdd, kSub, kMul, kDiv, kPow, kMax, kMin, kCompare,
  // kernels::UnaryOp
  kRelu, kNeg, kAbs, kSqrt, kReciprocal, kExp, kLog, kErf, kSigmoid, kTanh, kSilu, kGeluErf, kGeluTanh,
  kSin, kCos, kLeakyRelu, kHardSigmoid, kClip, kFloor, kCeil, kRound, kSign, kHardSwish, kSoftplus, kMish, kElu,
  kSelu, kCelu, kPRelu, kFmod, kMod,
  // the other Vector kernels
  kSelect, kCast, kScaleAndAdd, kBatchNormAffine, kLayerNormRow, kSoftmaxRow, kReduce, kPoolTap, kBiasAdd,
  kConvTap,
  // training (server/graph/ops/training_ops.cc)
  kReluGrad, kLeakyReluGrad, kSigmoidGrad, kTanhGrad, kGeluErfGrad, kGeluTanhGrad, kSoftmaxGradRow,
  kLogSoftmaxGradRow, kLayerNormGradRow, kNormParamGrad, kBatchNormTraining, kBatchNormGrad, kCrossEntropyRow,
  kCrossEntropyGradRow, kDropout, kDropoutGrad, kAccumulate, kSgdUpdate, kAdamUpdate,
  // issue 12
  kResizeLinearTap, kLogic, kReduceSquares, kReduceLogSumExp,
};

struct VectorPassEntry {
  VectorKernel kernel;
  const char* name;  // the kernel as docs name it
  int passes;
  const char* why;
};

// Every kernel, in enum order.
const VectorPassEntry* VectorPassTable(int* size);

int VectorPasses(VectorKernel k);
VectorKernel KernelOf(kernels::UnaryOp op);
VectorKernel KernelOf(kernels::BinaryOp op);

// The table as Markdown (docs/device-model.md, between its vector-passes markers).
std::string VectorPassesMarkdown();

}  // namespace npu::device
