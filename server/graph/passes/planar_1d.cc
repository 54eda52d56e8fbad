#include "server/graph/passes/planar_1d.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace npu::graph {
namespace {

bool Lifts(const v1::Node& n) {
  const std::string& op = n.op_type();
  if (op != "Conv" && op != "MaxPool" && op != "AveragePool" && op != "LpPool") return false;
  if (op == "MaxPool" && n.outputs_size() != 1) return false;  // Indices would index the planar tensor
  auto k = n.attributes().find("kernel_shape");
  return k != n.attributes().end() && k->second.ints().values_size() == 1 && n.inputs_size() >= 1 &&
         !n.inputs(0).empty();
}

v1::AttributeValue Ints(const std::vector<int64_t>& values) {
  v1::AttributeValue a;
  for (int64_t v : values) a.mutable_ints()->add_values(v);
  return a;
}

// The node's 1-D attributes given a unit first spatial axis: stride,
// dilation and kernel 1 before each per-axis entry, pads (0, 0) around them.
void WidenAttributes(v1::Node& n) {
  for (auto& [name, value] : *n.mutable_attributes()) {
    const auto& v = value.ints().values();
    if (name == "pads" && v.size() == 2) {
      value = Ints({0, v[0], 0, v[1]});
    } else if ((name == "kernel_shape" || name == "strides" || name == "dilations") && v.size() == 1) {
      value = Ints({1, v[0]});
    }
  }
}

v1::Node MakeNode(const std::string& name, const std::string& op, std::vector<std::string> inputs,
                  const std::string& output) {
  v1::Node n;
  n.set_name(name);
  n.set_op_type(op);
  for (auto& i : inputs) n.add_inputs(std::move(i));
  n.add_outputs(output);
  return n;
}

}  // namespace

void PlanarizeOneDimensional(v1::Graph& graph) {
  // Every graph is prepared: one that has nothing to lift is left untouched.
  if (std::none_of(graph.nodes().begin(), graph.nodes().end(), Lifts)) return;
  google::protobuf::RepeatedPtrField<v1::Node> nodes;
  for (v1::Node& n : *graph.mutable_nodes()) {
    if (!Lifts(n)) {
      *nodes.Add() = std::move(n);
      continue;
    }
    const std::string base = n.name() + "/planar";
    const std::string axes = base + "/axes";
    v1::Node axes_node = MakeNode(axes, "Constant", {}, axes);
    (*axes_node.mutable_attributes())["value_ints"] = Ints({2});
    *nodes.Add() = std::move(axes_node);
    const int lifted_inputs = n.op_type() == "Conv" ? 2 : 1;
    for (int i = 0; i < lifted_inputs && i < n.inputs_size(); ++i) {
      if (n.inputs(i).empty()) continue;
      const std::string planar = absl::StrCat(base, "/in", i);
      *nodes.Add() = MakeNode(planar, "Unsqueeze", {n.inputs(i), axes}, planar);
      n.set_inputs(i, planar);
    }
    WidenAttributes(n);
    const std::string out = n.outputs(0);
    const std::string planar_out = base + "/out";
    n.set_outputs(0, planar_out);
    *nodes.Add() = std::move(n);
    *nodes.Add() = MakeNode(base + "/squeeze", "Squeeze", {planar_out, axes}, out);
  }
  *graph.mutable_nodes() = std::move(nodes);
}

}  // namespace npu::graph
