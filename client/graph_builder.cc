#include "client/graph_builder.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace npu::client {

npu::v1::AttributeValue AttrInt(int64_t value) {
  npu::v1::AttributeValue attr;
  attr.set_i(value);
  return attr;
}

npu::v1::AttributeValue AttrFloat(float value) {
  npu::v1::AttributeValue attr;
  attr.set_f(value);
  return attr;
}

npu::v1::AttributeValue AttrString(std::string value) {
  npu::v1::AttributeValue attr;
  attr.set_s(std::move(value));
  return attr;
}

npu::v1::AttributeValue AttrInts(std::vector<int64_t> values) {
  npu::v1::AttributeValue attr;
  attr.mutable_ints()->mutable_values()->Add(values.begin(), values.end());
  return attr;
}

npu::v1::AttributeValue AttrFloats(std::vector<float> values) {
  npu::v1::AttributeValue attr;
  attr.mutable_floats()->mutable_values()->Add(values.begin(), values.end());
  return attr;
}

npu::v1::AttributeValue AttrStrings(std::vector<std::string> values) {
  npu::v1::AttributeValue attr;
  for (std::string& value : values) attr.mutable_strings()->add_values(std::move(value));
  return attr;
}

npu::v1::AttributeValue AttrTensor(npu::v1::Tensor value) {
  npu::v1::AttributeValue attr;
  *attr.mutable_t() = std::move(value);
  return attr;
}

int64_t OnnxDataTypeCode(npu::v1::DataType dtype) {
  switch (dtype) {
    case npu::v1::FLOAT32: return 1;
    case npu::v1::INT8: return 3;
    case npu::v1::INT32: return 6;
    case npu::v1::INT64: return 7;
    case npu::v1::BOOL: return 9;
    case npu::v1::FLOAT16: return 10;
    default: return 0;
  }
}

GraphBuilder::GraphBuilder(std::string graph_name) { graph_.set_name(std::move(graph_name)); }

void GraphBuilder::RecordError(absl::Status status) {
  if (status_.ok()) status_ = std::move(status);
}

void GraphBuilder::Claim(const std::string& name) {
  if (name.empty()) {
    RecordError(absl::InvalidArgumentError("graph values need a name"));
  } else if (!value_names_.insert(name).second) {
    RecordError(absl::InvalidArgumentError(absl::StrCat("value \"", name, "\" defined twice")));
  }
}

void GraphBuilder::CheckKnown(const Value& value, const std::string& user) {
  if (value_names_.count(value.name) == 0) {
    RecordError(absl::InvalidArgumentError(
        absl::StrCat(user, ": value \"", value.name, "\" is not defined in this graph")));
  }
}

std::string GraphBuilder::UniqueName(const std::string& base, std::map<std::string, int>& counters,
                                     const std::set<std::string>& taken,
                                     const std::string& suffix) {
  int& next = counters[base];
  while (true) {
    std::string name = absl::StrCat(base, "_", next++);
    // The node's outputs must be free too, so a user's value named
    // "MatMul_0_out" pushes the node to MatMul_1.
    if (taken.count(name) == 0 && value_names_.count(name + suffix) == 0) return name;
  }
}

Value GraphBuilder::Input(const std::string& name, npu::v1::DataType dtype,
                          std::vector<int64_t> shape) {
  Claim(name);
  npu::v1::ValueInfo* input = graph_.add_inputs();
  input->set_name(name);
  input->set_dtype(dtype);
  input->mutable_shape()->Add(shape.begin(), shape.end());
  return Value{name};
}

Value GraphBuilder::Constant(const std::string& name, npu::v1::Tensor tensor) {
  Claim(name);
  npu::v1::Initializer* initializer = graph_.add_initializers();
  initializer->set_name(name);
  *initializer->mutable_tensor() = std::move(tensor);
  return Value{name};
}

Value GraphBuilder::Op(const std::string& op_type, const std::vector<Value>& inputs,
                       const Attributes& attributes) {
  return OpN(op_type, inputs, 1, attributes).front();
}

std::vector<Value> GraphBuilder::OpN(const std::string& op_type, const std::vector<Value>& inputs,
                                     int num_outputs, const Attributes& attributes) {
  if (num_outputs < 1) {
    RecordError(absl::InvalidArgumentError(
        absl::StrCat(op_type, ": a node needs at least one output, asked for ", num_outputs)));
    num_outputs = 1;
  }
  const std::string first_suffix = num_outputs == 1 ? "_out" : "_out0";
  const std::string node_name = UniqueName(op_type, node_counters_, node_names_, first_suffix);
  node_names_.insert(node_name);

  npu::v1::Node* node = graph_.add_nodes();
  node->set_name(node_name);
  node->set_op_type(op_type);
  for (const Value& input : inputs) {
    // "" is ONNX's optional input left out.
    if (!input.name.empty()) CheckKnown(input, absl::StrCat("node \"", node_name, "\""));
    node->add_inputs(input.name);
  }
  for (const auto& [key, value] : attributes) (*node->mutable_attributes())[key] = value;

  std::vector<Value> outputs;
  for (int i = 0; i < num_outputs; ++i) {
    std::string name = num_outputs == 1 ? absl::StrCat(node_name, "_out")
                                        : absl::StrCat(node_name, "_out", i);
    Claim(name);
    node_output_names_.insert(name);
    node->add_outputs(name);
    outputs.push_back(Value{std::move(name)});
  }
  return outputs;
}

Value GraphBuilder::Cast(const Value& x, npu::v1::DataType to) {
  return Op("Cast", {x}, {{"to", AttrInt(OnnxDataTypeCode(to))}});
}

void GraphBuilder::Output(const Value& value, const std::string& name) {
  CheckKnown(value, "output");
  if (name.empty() || name == value.name) {
    graph_.add_outputs(value.name);
    return;
  }
  const bool renamable = node_output_names_.count(value.name) > 0 && renames_.count(value.name) == 0;
  if (renamable) {
    Claim(name);
    renames_[value.name] = name;
    graph_.add_outputs(value.name);  // renamed in Build
    return;
  }
  Value identity = Op("Identity", {value});
  Claim(name);
  renames_[identity.name] = name;
  graph_.add_outputs(identity.name);
}

npu::v1::Graph GraphBuilder::Build() const {
  npu::v1::Graph graph = graph_;
  if (renames_.empty()) return graph;
  auto rename = [&](std::string* name) {
    auto it = renames_.find(*name);
    if (it != renames_.end()) *name = it->second;
  };
  for (npu::v1::Node& node : *graph.mutable_nodes()) {
    for (std::string& input : *node.mutable_inputs()) rename(&input);
    for (std::string& output : *node.mutable_outputs()) rename(&output);
  }
  for (std::string& output : *graph.mutable_outputs()) rename(&output);
  return graph;
}

}  // namespace npu::client
