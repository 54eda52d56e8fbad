// Appending to an npu.v1.Graph under construction: nodes, initializers,
// inputs and outputs, each new value and node under a name no other has
// (`base`, or `base_N`). What autodiff, the amp casts, the loss and the
// optimizer update use to extend a model into a training step.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "npu/v1/graph.pb.h"
#include "server/graph/tensor_type.h"

namespace npu::train {

using Attributes = std::map<std::string, v1::AttributeValue>;

v1::AttributeValue AttrInt(int64_t v);
v1::AttributeValue AttrFloat(float v);
v1::AttributeValue AttrString(std::string v);
v1::AttributeValue AttrInts(std::vector<int64_t> v);

// ONNX TensorProto code of a float dtype (Cast's "to"): FLOAT32 1, FLOAT16 10.
int64_t OnnxFloatCode(graph::DataType dtype);

class GraphEditor {
 public:
  // Indexes the names `graph` already uses; edits it in place.
  explicit GraphEditor(v1::Graph* graph);

  // A value or node name nobody uses yet, reserved.
  std::string FreshValue(absl::string_view base);
  std::string FreshNode(absl::string_view base);

  // Appends op_type(inputs) with `outputs` fresh outputs named after `base`;
  // returns their names.
  std::vector<std::string> Add(absl::string_view op_type, const std::vector<std::string>& inputs, int outputs,
                               const Attributes& attrs, absl::string_view base);
  std::string Add1(absl::string_view op_type, const std::vector<std::string>& inputs, const Attributes& attrs,
                   absl::string_view base) {
    return Add(op_type, inputs, 1, attrs, base)[0];
  }
  // An initializer named after `base`.
  std::string Constant(absl::string_view base, v1::Tensor tensor);
  std::string ScalarConstant(absl::string_view base, float value, graph::DataType dtype);
  std::string IntsConstant(absl::string_view base, const std::vector<int64_t>& values);

  // A graph input of exactly this name (it must be free) and a graph output.
  void AddInput(const std::string& name, const graph::TensorType& type);
  void AddOutput(const std::string& name) { graph_->add_outputs(name); }

  v1::Graph& graph() { return *graph_; }

 private:
  std::string Fresh(absl::string_view base, std::set<std::string>& taken);

  v1::Graph* graph_;
  std::set<std::string> values_, nodes_;
};

}  // namespace npu::train
