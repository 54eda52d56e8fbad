// Fusion on the planned graph (BuildPlan runs it unless PlanOptions::fuse is
// false). Two kinds of chains become one node each:
//
//   Cube epilogue   a Conv, MatMul or Gemm followed by elementwise ops (bias
//                   Adds, Relu, Clip, Sigmoid x Mul, the erf GELU, residual
//                   Adds, scalings): FixPipe applies the chain to each result
//                   on its way out of L0C (OpDef::epilogue_axis). A
//                   BatchNormalization in inference mode right after a Conv
//                   is folded into its weights and bias first.
//   Vector chain    elementwise ops after one another: one Vector pass
//                   (ops/fused_elementwise_op.h) instead of one per op.
//
// A chain is a run of nodes where each takes the previous one's value; the
// chain's program (kernels/elementwise_program.h) also reads other values (its
// operands) and the value a step started from (x * sigmoid(x)). A value inside
// a chain may be read only by the chain and may not be a graph output. Fused
// chains give the unfused graph's bits (every step is the function the
// separate op calls, fp16 intermediates rounded where the op stored them);
// folding BatchNormalization changes the weights' rounding, within the bound
// docs/ops.md states. The fused node is placed where the chain's last node
// was, and the profile names it after all of its nodes.
#pragma once

#include <functional>

#include "absl/status/status.h"
#include "server/graph/fused_epilogue.h"
#include "server/graph/plan.h"

namespace npu::graph {

// Prepares `node` (a copy of a Cube op's node with the chain's operands as
// extra inputs) again with `epilogue`; an error leaves the chain unfused.
using PrepareWithEpilogue = std::function<absl::Status(PlanNode& node, const FusedEpilogue& epilogue)>;

// Rewrites plan.nodes, fusing the chains it finds. Values fused away are no
// longer produced or read (the planner drops them). plan.outputs must be set.
void FuseChains(Plan& plan, const PrepareWithEpilogue& prepare);

}  // namespace npu::graph
