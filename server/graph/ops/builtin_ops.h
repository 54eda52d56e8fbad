// Registration of the built-in operators, one function per op family.
#pragma once

#include "server/graph/op_registry.h"

namespace npu::graph::ops {

void RegisterCubeOps(OpRegistry& r);         // MatMul
void RegisterGemmOp(OpRegistry& r);
void RegisterConvOp(OpRegistry& r);
void RegisterConvTransposeOp(OpRegistry& r);
void RegisterEinsumOp(OpRegistry& r);
void RegisterLstmOp(OpRegistry& r);
void RegisterGruOp(OpRegistry& r);
void RegisterElementwiseOps(OpRegistry& r);  // Add, Mul, Pow, PRelu, Mod, Where, ...
void RegisterCompareOps(OpRegistry& r);      // Equal, Less, LessOrEqual, Greater, GreaterOrEqual
void RegisterActivationOps(OpRegistry& r);   // Relu, Exp, Gelu, Clip, ...
void RegisterCastOp(OpRegistry& r);
void RegisterReduceOps(OpRegistry& r);       // ReduceSum/Mean/Max/Min, ArgMax
void RegisterSoftmaxOps(OpRegistry& r);      // Softmax, LogSoftmax
void RegisterNormOps(OpRegistry& r);         // Layer/Instance/Group/BatchNormalization
void RegisterPoolOps(OpRegistry& r);         // MaxPool, AveragePool, GlobalAveragePool
void RegisterViewOps(OpRegistry& r);         // Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout
void RegisterCopyOps(OpRegistry& r);         // Transpose, Slice, Expand, Concat, Split
void RegisterGatherOp(OpRegistry& r);
void RegisterConstantOps(OpRegistry& r);     // Constant, Shape
// What training graphs add: gradients, losses, seeded dropout, optimizer
// updates and the float status (training_ops.cc).
void RegisterTrainingOps(OpRegistry& r);
void RegisterPadOp(OpRegistry& r);
void RegisterConstantOfShapeOp(OpRegistry& r);
void RegisterRangeOp(OpRegistry& r);
void RegisterTileOp(OpRegistry& r);
void RegisterResizeOp(OpRegistry& r);
void RegisterLogicOps(OpRegistry& r);        // Not, And, Or, Xor
void RegisterVariadicOps(OpRegistry& r);     // Sum, Mean, Max, Min
void RegisterCumSumOp(OpRegistry& r);
void RegisterTriluOp(OpRegistry& r);
void RegisterGatherElementsOp(OpRegistry& r);
void RegisterScatterNDOp(OpRegistry& r);
void RegisterSpaceDepthOps(OpRegistry& r);   // DepthToSpace, SpaceToDepth
void RegisterTopKOps(OpRegistry& r);         // TopK, Hardmax

inline void RegisterBuiltinOps(OpRegistry& r) {
  RegisterCubeOps(r);
  RegisterGemmOp(r);
  RegisterConvOp(r);
  RegisterConvTransposeOp(r);
  RegisterEinsumOp(r);
  RegisterLstmOp(r);
  RegisterGruOp(r);
  RegisterElementwiseOps(r);
  RegisterCompareOps(r);
  RegisterActivationOps(r);
  RegisterCastOp(r);
  RegisterReduceOps(r);
  RegisterSoftmaxOps(r);
  RegisterNormOps(r);
  RegisterPoolOps(r);
  RegisterViewOps(r);
  RegisterCopyOps(r);
  RegisterGatherOp(r);
  RegisterConstantOps(r);
  RegisterTrainingOps(r);
  RegisterPadOp(r);
  RegisterConstantOfShapeOp(r);
  RegisterRangeOp(r);
  RegisterTileOp(r);
  RegisterResizeOp(r);
  RegisterLogicOps(r);
  RegisterVariadicOps(r);
  RegisterCumSumOp(r);
  RegisterTriluOp(r);
  RegisterGatherElementsOp(r);
  RegisterScatterNDOp(r);
  RegisterSpaceDepthOps(r);
  RegisterTopKOps(r);
}

}  // namespace npu::graph::ops
