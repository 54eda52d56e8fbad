// Registration of the built-in operators, one function per op family.
#pragma once

#include "server/graph/op_registry.h"

namespace npu::graph::ops {

void RegisterCubeOps(OpRegistry& r);         // MatMul
void RegisterElementwiseOps(OpRegistry& r);  // Add, Mul, Relu, ...
void RegisterCastOp(OpRegistry& r);

inline void RegisterBuiltinOps(OpRegistry& r) {
  RegisterCubeOps(r);
  RegisterElementwiseOps(r);
  RegisterCastOp(r);
}

}  // namespace npu::graph::ops
