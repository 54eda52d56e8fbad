// Registration of the built-in operators, one function per op family.
#pragma once

#include "server/graph/op_registry.h"

namespace npu::graph::ops {

void RegisterCubeOps(OpRegistry& r);         // MatMul
void RegisterGemmOp(OpRegistry& r);
void RegisterConvOp(OpRegistry& r);
void RegisterElementwiseOps(OpRegistry& r);  // Add, Mul, Pow, Max, Where, ...
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

inline void RegisterBuiltinOps(OpRegistry& r) {
  RegisterCubeOps(r);
  RegisterGemmOp(r);
  RegisterConvOp(r);
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
}

}  // namespace npu::graph::ops
