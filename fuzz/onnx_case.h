// The server's ONNX import, passes, planner and runs under mutated real
// models, for fuzz/onnx_fuzzer.cc (a structure-aware libFuzzer mutator: the
// input is a serialized ModelProto, mutated as a model, not as bytes) and the
// seeded CI run. The mutations are what a hostile or broken exporter writes:
// another opset (or none, or two), ops swapped for others (supported, not,
// empty), domains, values renamed onto one another (single assignment
// broken), nodes duplicated, dropped or left without outputs, attributes of
// the wrong type, extreme values, unknown names or nested subgraphs,
// initializers with huge, negative or mismatched dims, types and data, and
// graph inputs and outputs changed. The oracle: every status is a clear one
// (never INTERNAL or UNKNOWN), and a model that plans small runs.
#pragma once

#include <string>

#include "fuzz/choice_source.h"
#include "onnx/onnx_pb.h"

namespace npu::fuzz {

// One to four mutations of `model`.
void MutateModel(::onnx::ModelProto& model, ChoiceSource& src);

// "" or what the oracle found, for a serialized model.
std::string CheckOnnxModel(const std::string& bytes);

}  // namespace npu::fuzz
