// Float64 references for the elementwise ops (exact ones for INT32 reductions), written from the ONNX spec and
// the rules docs/ops.md states (fp16 rounded once to nearest even, saturating
// on presets that saturate; integer wrap-around, division by zero gives 0;
// Cast's conversions), never from the kernels. The fuzzer checks every node it
// can against them, one node at a time, fed the values the run actually gave
// that node's inputs, so an error in one node is not blamed on another and
// tolerances need not compound.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "npu/v1/graph.pb.h"
#include "server/graph/host_tensor.h"

namespace npu::fuzz {

// How closely an op's result must match the float64 reference.
enum class Closeness {
  kExact,           // IEEE-exact ops (+ - * / sqrt, selections, conversions): the correctly rounded value
  kTranscendental,  // the project's transcendental tolerance (ops_torch_test): atol 1e-6 + rtol 1e-5 in fp32, 1e-5 + 2e-3 in fp16
};

struct NodeReference {
  // Output 0, row-major, already rounded to the output type: integers and
  // BOOL exactly in `ints`, floats in `values`.
  std::vector<double> values;
  std::vector<int64_t> ints;
  std::vector<bool> checked;  // per element: false where the op's result is undefined (left unchecked)
  Closeness closeness = Closeness::kExact;
};

// The reference for output 0 of `node`, given its inputs (nullptr for an
// omitted optional input) and the output's inferred type; nullopt when the op
// has no reference here.
std::optional<NodeReference> ReferenceFor(const v1::Node& node, const std::vector<const graph::HostTensor*>& inputs,
                                          const graph::TensorType& out, bool fp16_saturation);

// Empty when `got` matches `ref`; otherwise the first elements that are off.
std::string CompareToReference(const graph::HostTensor& got, const NodeReference& ref);

}  // namespace npu::fuzz
