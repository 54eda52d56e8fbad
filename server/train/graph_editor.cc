#include "server/train/graph_editor.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "kernels/fp16.h"

namespace npu::train {

v1::AttributeValue AttrInt(int64_t v) {
  v1::AttributeValue a;
  a.set_i(v);
  return a;
}

v1::AttributeValue AttrFloat(float v) {
  v1::AttributeValue a;
  a.set_f(v);
  return a;
}

v1::AttributeValue AttrString(std::string v) {
  v1::AttributeValue a;
  a.set_s(std::move(v));
  return a;
}

v1::AttributeValue AttrInts(std::vector<int64_t> v) {
  v1::AttributeValue a;
  for (int64_t x : v) a.mutable_ints()->add_values(x);
  return a;
}

int64_t OnnxFloatCode(graph::DataType dtype) { return dtype == v1::FLOAT16 ? 10 : 1; }

GraphEditor::GraphEditor(v1::Graph* graph) : graph_(graph) {
  for (const auto& in : graph->inputs()) values_.insert(in.name());
  for (const auto& init : graph->initializers()) values_.insert(init.name());
  for (const auto& node : graph->nodes()) {
    nodes_.insert(node.name());
    for (const auto& out : node.outputs()) values_.insert(out);
  }
}

std::string GraphEditor::Fresh(absl::string_view base, std::set<std::string>& taken) {
  std::string name(base);
  for (int n = 1; taken.contains(name); ++n) name = absl::StrCat(base, "_", n);
  taken.insert(name);
  return name;
}

std::string GraphEditor::FreshValue(absl::string_view base) { return Fresh(base, values_); }
std::string GraphEditor::FreshNode(absl::string_view base) { return Fresh(base, nodes_); }

std::vector<std::string> GraphEditor::Add(absl::string_view op_type, const std::vector<std::string>& inputs,
                                          int outputs, const Attributes& attrs, absl::string_view base) {
  v1::Node* node = graph_->add_nodes();
  node->set_name(FreshNode(base));
  node->set_op_type(std::string(op_type));
  for (const std::string& in : inputs) node->add_inputs(in);
  std::vector<std::string> names;
  for (int i = 0; i < outputs; ++i) {
    names.push_back(FreshValue(outputs == 1 ? std::string(base) : absl::StrCat(base, ":", i)));
    node->add_outputs(names.back());
  }
  for (const auto& [k, v] : attrs) (*node->mutable_attributes())[k] = v;
  return names;
}

std::string GraphEditor::Constant(absl::string_view base, v1::Tensor tensor) {
  v1::Initializer* init = graph_->add_initializers();
  init->set_name(FreshValue(base));
  *init->mutable_tensor() = std::move(tensor);
  return init->name();
}

std::string GraphEditor::ScalarConstant(absl::string_view base, float value, graph::DataType dtype) {
  v1::Tensor t;
  t.set_dtype(dtype);
  if (dtype == v1::FLOAT16) {
    const kernels::half_bits h = kernels::FloatToHalf(value);
    t.set_data(std::string(reinterpret_cast<const char*>(&h), sizeof h));
  } else {
    t.set_data(std::string(reinterpret_cast<const char*>(&value), sizeof value));
  }
  return Constant(base, std::move(t));
}

std::string GraphEditor::IntsConstant(absl::string_view base, const std::vector<int64_t>& values) {
  v1::Tensor t;
  t.set_dtype(v1::INT64);
  t.add_shape(static_cast<int64_t>(values.size()));
  t.set_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(int64_t)));
  return Constant(base, std::move(t));
}

void GraphEditor::AddInput(const std::string& name, const graph::TensorType& type) {
  values_.insert(name);
  v1::ValueInfo* in = graph_->add_inputs();
  in->set_name(name);
  in->set_dtype(type.dtype);
  for (int64_t d : type.shape) in->add_shape(d);
}

}  // namespace npu::train
