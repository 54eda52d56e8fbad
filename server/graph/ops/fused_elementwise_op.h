// One Vector pass for a fused chain of elementwise ops (fusion.h): each chunk
// of the output is loaded once, run through the chain's program
// (kernels/elementwise_program.h) while it is in UB, and stored once, instead
// of one pass over memory per op. The op is given to fused nodes by the fusion
// pass; it is not in the registry, so no client can name it.
#pragma once

#include <cstdint>
#include <memory>

#include "kernels/elementwise_program.h"
#include "server/graph/op_registry.h"

namespace npu::graph::ops {

// A fused node's inputs: the chain's start value (input 0, of the output's
// shape and type), then the program's operands (any shape that broadcasts to
// the output).
struct FusedElementwisePlan {
  kernels::EwProgram program;
  int64_t passes = 1;  // Vector passes per chunk: the chain's ops' summed
};

const OpDef& FusedElementwiseOp();

}  // namespace npu::graph::ops
