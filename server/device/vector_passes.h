// How many full passes of the Vector unit over its operands one element of an
// op costs: the `passes` argument of VectorChunkWork (server/graph/vector_tiling.h).
// Simple arithmetic is one instruction (one pass). Transcendentals are built by
// the Vector unit from several instructions (range reduction, a polynomial or
// table step, reconstruction), so they cost more passes. Huawei does not
// publish per-instruction latencies: the counts below are the model's
// assumptions (a count of the elementary steps of a textbook implementation),
// and they are part of the model version.
#pragma once

#include <string_view>

namespace npu::device {

struct VectorPassCount {
  std::string_view op;  // ONNX op type
  int passes;
};

// | op                                            | passes | why                                   |
// | Add Sub Mul Max Min Relu Neg Abs Cast Where   | 1      | one vadd/vmul/vmax/vconv... each      |
// | Div Reciprocal Sqrt                           | 2      | vdiv/vrec and vsqrt take two passes   |
// | Exp Log                                       | 4      | range reduction + polynomial + scale  |
// | Sigmoid                                       | 6      | exp (4) + add + reciprocal            |
// | Tanh                                          | 7      | exp (4) + add, sub, div               |
// | Erf                                           | 8      | rational approximation                |
// | Gelu                                          | 10     | erf (8) + mul + add                   |
// | Pow                                           | 9      | log (4) + mul + exp (4)               |
inline constexpr VectorPassCount kVectorPasses[] = {
    {"Add", 1},     {"Sub", 1},        {"Mul", 1},      {"Max", 1},     {"Min", 1},   {"Relu", 1},
    {"Neg", 1},     {"Abs", 1},        {"Cast", 1},     {"Where", 1},   {"Div", 2},   {"Reciprocal", 2},
    {"Sqrt", 2},    {"Exp", 4},        {"Log", 4},      {"Sigmoid", 6}, {"Tanh", 7},  {"Erf", 8},
    {"Gelu", 10},   {"Pow", 9},
};

// Passes of `op`; 1 for ops not in the table (treated as simple arithmetic).
constexpr int VectorPasses(std::string_view op) {
  for (const VectorPassCount& p : kVectorPasses) {
    if (p.op == op) return p.passes;
  }
  return 1;
}

}  // namespace npu::device
