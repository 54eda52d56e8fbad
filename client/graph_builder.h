// Builds npu.v1.Graph messages so programs never hand-write protos:
//
//   GraphBuilder g("mlp");
//   Value x = g.Input("x", npu::v1::FLOAT16, {4, 8});
//   Value w = g.Constant("w", weights);
//   Value y = g.Relu(g.Add(g.MatMul(x, w), b));
//   g.Output(y, "y");
//   npu::v1::Graph graph = g.Build();
//
// Node names ("MatMul_0") and output value names ("MatMul_0_out") are made
// unique automatically. Misuse (duplicate names, values from another builder)
// is recorded in status(); the server would name the same fault.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "npu/v1/graph.pb.h"
#include "npu/v1/tensor.pb.h"

namespace npu::client {

// A value in the graph under construction: an input, a constant or a node output.
struct Value {
  std::string name;
};

using Attributes = std::map<std::string, npu::v1::AttributeValue>;

npu::v1::AttributeValue AttrInt(int64_t value);
npu::v1::AttributeValue AttrFloat(float value);
npu::v1::AttributeValue AttrString(std::string value);
npu::v1::AttributeValue AttrInts(std::vector<int64_t> values);
npu::v1::AttributeValue AttrFloats(std::vector<float> values);
npu::v1::AttributeValue AttrStrings(std::vector<std::string> values);
npu::v1::AttributeValue AttrTensor(npu::v1::Tensor value);

// ONNX TensorProto.DataType code (FLOAT16 -> 10, FLOAT32 -> 1, ...), the
// encoding of dtype attributes such as Cast's "to"; 0 when unspecified.
int64_t OnnxDataTypeCode(npu::v1::DataType dtype);

class GraphBuilder {
 public:
  explicit GraphBuilder(std::string graph_name);

  // A value the caller feeds at run time.
  Value Input(const std::string& name, npu::v1::DataType dtype, std::vector<int64_t> shape);
  // A constant (weights), stored in the graph as an initializer.
  Value Constant(const std::string& name, npu::v1::Tensor tensor);

  // Any op with one output, ONNX op type and attributes.
  Value Op(const std::string& op_type, const std::vector<Value>& inputs,
           const Attributes& attributes = {});
  // Any op with num_outputs outputs.
  std::vector<Value> OpN(const std::string& op_type, const std::vector<Value>& inputs,
                         int num_outputs, const Attributes& attributes = {});

  Value MatMul(const Value& a, const Value& b) { return Op("MatMul", {a, b}); }
  Value Add(const Value& a, const Value& b) { return Op("Add", {a, b}); }
  Value Mul(const Value& a, const Value& b) { return Op("Mul", {a, b}); }
  Value Relu(const Value& x) { return Op("Relu", {x}); }
  // ONNX Cast; attribute "to" holds the ONNX TensorProto code of `to`, as in ONNX.
  Value Cast(const Value& x, npu::v1::DataType to);

  // Marks a value as a graph output, returned by Run under `name` (its own
  // name when empty). A node output is renamed; an input or constant returned
  // under another name goes through an Identity node.
  void Output(const Value& value, const std::string& name = "");

  // The graph so far, with output renames applied. May be called repeatedly.
  npu::v1::Graph Build() const;

  // First misuse recorded, or OK.
  absl::Status status() const { return status_; }

 private:
  // Claims `name` for a value; records a misuse when it is taken.
  void Claim(const std::string& name);
  // `base` + "_" + n, for the smallest per-base n whose result is free.
  std::string UniqueName(const std::string& base, std::map<std::string, int>& counters,
                         const std::set<std::string>& taken, const std::string& suffix);
  void CheckKnown(const Value& value, const std::string& user);
  void RecordError(absl::Status status);

  npu::v1::Graph graph_;
  std::set<std::string> value_names_;
  std::set<std::string> node_names_;
  std::set<std::string> node_output_names_;  // renamable by Output
  std::map<std::string, std::string> renames_;
  std::map<std::string, int> node_counters_;
  absl::Status status_;
};

}  // namespace npu::client
