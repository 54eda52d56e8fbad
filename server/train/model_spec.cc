#include "server/train/model_spec.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace npu::train {

const v1::Initializer* FindInitializer(const v1::Graph& graph, const std::string& name) {
  for (const auto& init : graph.initializers()) {
    if (init.name() == name) return &init;
  }
  return nullptr;
}

graph::TensorType TypeOf(const v1::Tensor& t) { return {t.dtype(), graph::Shape(t.shape().begin(), t.shape().end())}; }

void NameNodes(v1::Graph& graph) {
  for (int i = 0; i < graph.nodes_size(); ++i) {
    v1::Node* n = graph.mutable_nodes(i);
    if (n->name().empty()) n->set_name(absl::StrCat(n->op_type(), "_", i));
  }
}

std::set<std::string> BatchNormInputs(const v1::Graph& graph, std::initializer_list<int> which) {
  std::set<std::string> read;
  for (const auto& n : graph.nodes()) {
    if (n.op_type() != "BatchNormalization" || n.inputs_size() < 5) continue;
    for (int i : which) read.insert(n.inputs(i));
  }
  return read;
}

absl::StatusOr<ModelSpec> DescribeModel(v1::Graph graph, const std::vector<std::string>& trainable) {
  ModelSpec spec;
  if (graph.inputs_size() != 1) {
    std::vector<std::string> names;
    for (const auto& in : graph.inputs()) names.push_back(in.name());
    return absl::InvalidArgumentError(absl::StrCat("a model to train takes one data input, this one ",
                                                   graph.inputs_size(), " (", absl::StrJoin(names, ", "), ")"));
  }
  if (graph.outputs_size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat("a model to train has one output (the prediction), this one ",
                                                   graph.outputs_size(), " (", absl::StrJoin(graph.outputs(), ", "),
                                                   ")"));
  }
  const v1::ValueInfo& in = graph.inputs(0);
  if (in.shape_size() < 1 || !graph::IsFloat(in.dtype())) {
    return absl::InvalidArgumentError(absl::StrCat("the model's input \"", in.name(),
                                                   "\" must be a float tensor with a batch dimension first"));
  }
  spec.input = in.name();
  spec.output = graph.outputs(0);
  NameNodes(graph);
  const std::set<std::string> buffers = RunningStatistics(graph);
  const std::set<std::string> bn_params = BatchNormInputs(graph, {1, 2});
  std::set<std::string> wanted(trainable.begin(), trainable.end());
  for (const std::string& name : trainable) {
    const v1::Initializer* init = FindInitializer(graph, name);
    if (init == nullptr || !graph::IsFloat(init->tensor().dtype())) {
      return absl::InvalidArgumentError(absl::StrCat("trainable parameter \"", name,
                                                     "\" is not a float initializer of the model"));
    }
    if (buffers.contains(name)) {
      return absl::InvalidArgumentError(absl::StrCat("\"", name, "\" is a BatchNormalization running statistic, "
                                                     "updated by the forward pass, not trained"));
    }
  }
  for (const auto& init : graph.initializers()) {
    if (!graph::IsFloat(init.tensor().dtype())) continue;
    if (buffers.contains(init.name())) {
      spec.buffers.push_back(init.name());
    } else if (wanted.empty() || wanted.contains(init.name())) {
      spec.params.push_back(init.name());
      if (bn_params.contains(init.name())) spec.bn_params.push_back(init.name());
    }
  }
  if (spec.params.empty()) return absl::InvalidArgumentError("the model has no float initializers to train");
  spec.graph = std::move(graph);
  return spec;
}

}  // namespace npu::train
