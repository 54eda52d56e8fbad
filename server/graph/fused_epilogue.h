// What the fusion pass (fusion.h) asks a Cube op to absorb into its FixPipe
// epilogue: the elementwise ops after it, as one program, and a BatchNormalization
// right after a convolution, folded into its weights and bias.
#pragma once

#include <vector>

#include "kernels/cube_gemm.h"
#include "kernels/elementwise_program.h"

namespace npu::graph {

struct FusedEpilogue {
  // Applied by FixPipe to each result after the op's own bias (elementwise_program.h;
  // `in` is that result, after a folded BatchNormalization).
  kernels::EwProgram program;
  // Program operand i is input first_operand + i of the fused node (the op's own
  // inputs come first, padded to its max_inputs with omitted ones), read as
  // `kinds[i]` says (a scalar, one value per output channel or column, or a
  // tensor of the output's own shape).
  int first_operand = 0;
  std::vector<kernels::EpilogueOperand::Kind> kinds;
  // A folded BatchNormalization, per output channel: y = scale * conv + shift.
  // The weights are scaled before their one rounding to fp16, so results differ
  // from the unfused graph's within the bound in docs/ops.md.
  std::vector<float> channel_scale, channel_shift;
};

}  // namespace npu::graph
