// An ONNX Einsum equation ("bij,bjk->bik", "...ij,...jk", "ii->i" is not
// supported) parsed against its operands' shapes: every label with its size,
// each operand's labels in order, and the output's (explicit after "->", or
// numpy's implicit form: the labels that appear once, in ASCII order, after the
// ellipsis dims). "..." stands for the same leading dims in every operand
// (aligned from the right, as numpy aligns them; broadcasting a size-1
// ellipsis dim is not supported).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "npu/v1/graph.pb.h"
#include "server/graph/tensor_type.h"

namespace npu::graph::ops {

struct EinsumEquation {
  // Label ids: 0-51 for a-z, A-Z; 52 + i for the i-th ellipsis dim.
  std::vector<std::vector<int>> operands;  // each operand's labels, one per dim
  std::vector<int> output;                 // the output's labels, one per dim
  std::vector<int64_t> size;               // size[label] (0 where the label is unused)
  std::vector<bool> used;                  // used[label]

  bool In(int operand, int label) const;
  bool InOutput(int label) const;
};

// Parses `equation` for inputs of `shapes`; INVALID_ARGUMENT naming the node
// and what is wrong (a character, a repeated label, sizes that differ).
absl::StatusOr<EinsumEquation> ParseEinsum(const v1::Node& node, const std::string& equation,
                                           const std::vector<Shape>& shapes);

}  // namespace npu::graph::ops
