#include "server/train/training_forward.h"

#include <algorithm>
#include <memory>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/graph/passes/prepare_graph.h"
#include "server/train/graph_editor.h"

namespace npu::train {
namespace {

// Dropout's ratio: its second input, or ONNX's default 0.5.
std::string RatioOf(const v1::Node& node, GraphEditor& g) {
  if (node.inputs_size() > 1 && !node.inputs(1).empty()) return node.inputs(1);
  return g.ScalarConstant(node.name() + "/ratio", 0.5f, v1::FLOAT32);
}

}  // namespace

absl::Status CheckDataShape(const ModelSpec& spec, const graph::Shape& x) {
  const v1::ValueInfo& in = spec.graph.inputs(0);
  bool fits = static_cast<int>(x.size()) == in.shape_size() && !x.empty() && x[0] >= 1;
  for (int d = 1; fits && d < in.shape_size(); ++d) fits = in.shape(d) < 0 ? x[d] >= 1 : x[d] == in.shape(d);
  if (fits) return absl::OkStatus();
  std::string want = "[B";
  for (int d = 1; d < in.shape_size(); ++d) {
    absl::StrAppend(&want, ", ", in.shape(d) < 0 ? std::string("any") : absl::StrCat(in.shape(d)));
  }
  return absl::InvalidArgumentError(absl::StrCat("the batch \"", in.name(), "\" must be FLOAT32 ", want,
                                                 "] (B >= 1), got ", graph::ShapeToString(x)));
}

void DropoutsForInference(v1::Graph& graph) {
  for (v1::Node& node : *graph.mutable_nodes()) {
    if (node.op_type() != "Dropout") continue;
    while (node.inputs_size() > 2) node.mutable_inputs()->RemoveLast();
  }
}

bool OnlyTheBatchIsDynamic(const ModelSpec& spec) {
  const auto& dims = spec.graph.inputs(0).shape();
  return std::all_of(dims.begin() + std::min(1, dims.size()), dims.end(), [](int64_t d) { return d >= 0; });
}

absl::StatusOr<ForwardIO> MakeForward(const ModelSpec& spec, const std::optional<graph::Shape>& x, bool training,
                                      v1::Graph& out) {
  if (x.has_value()) {
    if (auto s = CheckDataShape(spec, *x); !s.ok()) return s;
  }
  out = spec.graph;
  if (x.has_value()) {
    auto* dims = out.mutable_inputs(0)->mutable_shape();
    dims->Clear();
    for (int64_t d : *x) dims->Add(d);
  }
  // Parameters and running statistics: initializers -> inputs.
  std::set<std::string> lifted(spec.params.begin(), spec.params.end());
  lifted.insert(spec.buffers.begin(), spec.buffers.end());
  google::protobuf::RepeatedPtrField<v1::Initializer> kept;
  for (auto& init : *out.mutable_initializers()) {
    if (!lifted.contains(init.name())) {
      *kept.Add() = std::move(init);
      continue;
    }
    v1::ValueInfo* in = out.add_inputs();
    in->set_name(init.name());
    in->set_dtype(init.tensor().dtype());
    *in->mutable_shape() = init.tensor().shape();
  }
  out.mutable_initializers()->Swap(&kept);

  ForwardIO io;
  if (!training) DropoutsForInference(out);
  GraphEditor g(&out);
  const int n = out.nodes_size();
  for (int i = 0; i < n; ++i) {
    v1::Node* node = out.mutable_nodes(i);
    const std::string& op = node->op_type();
    if (op == "BatchNormalization") {
      (*node->mutable_attributes())["training_mode"] = AttrInt(training ? 1 : 0);
      while (node->outputs_size() > 1) node->mutable_outputs()->RemoveLast();
      for (int k : {3, 4}) {
        if (!training) break;
        const std::string updated = g.FreshValue(node->inputs(k) + "/updated");
        node->add_outputs(updated);
        io.buffer_out[node->inputs(k)] = updated;
      }
    } else if (op == "LayerNormalization" && training) {
      for (const char* stat : {"/mean", "/inv_std_dev"}) {
        if (node->outputs_size() < 3) node->add_outputs(g.FreshValue(node->name() + stat));
      }
    } else if (op == "Dropout" && training) {
      if (io.dropout_seed.empty()) {
        io.dropout_seed = g.FreshValue("step/dropout_seed");
        g.AddInput(io.dropout_seed, {v1::INT64, {}});
      }
      const std::string data = node->inputs(0), ratio = RatioOf(*node, g);
      node = out.mutable_nodes(i);  // the editor adds initializers and inputs here, never nodes
      node->set_op_type("SeededDropout");
      node->mutable_attributes()->clear();
      node->mutable_inputs()->Clear();
      for (const std::string& in : {data, ratio, io.dropout_seed}) node->add_inputs(in);
      if (node->outputs_size() < 2) node->add_outputs(g.FreshValue(node->name() + "/mask"));
    }
  }
  return io;
}

absl::Status FoldShapeComputations(v1::Graph& f, const device::DevicePreset& preset) {
  std::vector<graph::TensorType> types;
  for (const auto& in : f.inputs()) {
    for (int64_t d : in.shape()) {
      if (d < 0) return absl::OkStatus();  // dynamic dims: left to the planner, which names what it cannot bind
    }
    types.push_back({in.dtype(), graph::Shape(in.shape().begin(), in.shape().end())});
  }
  auto prepared = graph::PrepareGraph(std::make_shared<const v1::Graph>(f), &types, preset, graph::PlanLimits{});
  if (!prepared.ok()) return prepared.status();
  v1::Graph folded = *prepared->graph;
  std::set<std::string> present;
  for (const auto& init : folded.initializers()) present.insert(init.name());
  for (const auto& init : prepared->weights->initializers()) {
    if (!present.contains(init.name())) *folded.add_initializers() = init;
  }
  f = std::move(folded);
  return absl::OkStatus();
}

}  // namespace npu::train
