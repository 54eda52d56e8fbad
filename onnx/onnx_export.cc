#include "onnx/onnx_export.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "onnx/onnx_pb.h"
#include "onnx/opsets.h"
#include "onnx/supported_ops.h"

namespace npu::onnxio {
namespace {

using ::onnx::AttributeProto;
using ::onnx::TensorProto;

TensorProto::DataType OnnxType(v1::DataType dtype) {
  switch (dtype) {
    case v1::FLOAT32: return TensorProto::FLOAT;
    case v1::FLOAT16: return TensorProto::FLOAT16;
    case v1::INT32: return TensorProto::INT32;
    case v1::INT8: return TensorProto::INT8;
    case v1::BOOL: return TensorProto::BOOL;
    case v1::INT64: return TensorProto::INT64;
    default: return TensorProto::UNDEFINED;
  }
}

void ToOnnx(const v1::Tensor& t, const std::string& name, TensorProto* out) {
  out->set_name(name);
  out->set_data_type(OnnxType(t.dtype()));
  *out->mutable_dims() = t.shape();
  out->set_raw_data(t.data());  // little-endian, as ONNX's raw_data is
}

void ToOnnx(const std::string& name, const v1::AttributeValue& v, AttributeProto* a) {
  a->set_name(name);
  switch (v.value_case()) {
    case v1::AttributeValue::kI: a->set_type(AttributeProto::INT); a->set_i(v.i()); break;
    case v1::AttributeValue::kF: a->set_type(AttributeProto::FLOAT); a->set_f(v.f()); break;
    case v1::AttributeValue::kS: a->set_type(AttributeProto::STRING); a->set_s(v.s()); break;
    case v1::AttributeValue::kInts:
      a->set_type(AttributeProto::INTS);
      *a->mutable_ints() = v.ints().values();
      break;
    case v1::AttributeValue::kFloats:
      a->set_type(AttributeProto::FLOATS);
      *a->mutable_floats() = v.floats().values();
      break;
    case v1::AttributeValue::kStrings:
      a->set_type(AttributeProto::STRINGS);
      for (const std::string& s : v.strings().values()) a->add_strings(s);
      break;
    case v1::AttributeValue::kT:
      a->set_type(AttributeProto::TENSOR);
      ToOnnx(v.t(), "", a->mutable_t());
      break;
    default: a->set_type(AttributeProto::UNDEFINED); break;
  }
}

// A dims of -1 is left unknown (a dynamic dim, as torch's dynamic_axes are).
void ToOnnx(const v1::ValueInfo& v, ::onnx::ValueInfoProto* out) {
  out->set_name(v.name());
  auto* tensor = out->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(OnnxType(v.dtype()));
  auto* shape = tensor->mutable_shape();
  for (int64_t d : v.shape()) {
    auto* dim = shape->add_dim();
    if (d >= 0) dim->set_dim_value(d);
  }
}

absl::Status CheckExportable(const v1::Node& n) {
  auto op = SupportedOps().find(n.op_type());
  if (op == SupportedOps().end() || IsTrainingOp(n.op_type())) {
    return absl::FailedPreconditionError(absl::StrCat("node \"", n.name(), "\" (", n.op_type(),
                                                      ") is not an ONNX op: the model exports as NPU_GRAPH only"));
  }
  for (const auto& [name, value] : n.attributes()) {
    if (!op->second.contains(name)) {
      return absl::FailedPreconditionError(absl::StrCat("node \"", n.name(), "\" (", n.op_type(), ") attribute \"",
                                                        name, "\" is not ONNX's: the model exports as NPU_GRAPH only"));
    }
  }
  return absl::OkStatus();
}

// The opset to export at: kExportOpset when every node's form is valid
// there, else the nearest served one where it is (GroupNormalization needs
// 18, Gelu 20), else FAILED_PRECONDITION naming what no opset takes (a
// ReduceMean with its axes as an attribute next to a Gelu). The graph's ops
// are today's, so no opset that would rewrite a node is chosen.
absl::StatusOr<int> ExportOpset(const v1::Graph& graph) {
  std::vector<int> order;
  for (int v = kExportOpset; v <= kMaxServedOpset; ++v) order.push_back(v);
  for (int v = kExportOpset - 1; v >= 13; --v) order.push_back(v);
  ::onnx::NodeProto probe;
  NodeProblems first;
  for (int v : order) {
    NodeProblems problems;
    for (const v1::Node& n : graph.nodes()) {
      probe.Clear();
      probe.set_op_type(n.op_type());
      for (const std::string& in : n.inputs()) probe.add_input(in);
      for (const auto& [name, value] : n.attributes()) {
        ::onnx::AttributeProto* a = probe.add_attribute();
        a->set_name(name);
        if (value.value_case() == v1::AttributeValue::kS) a->set_s(value.s());
      }
      CheckNodeOpset(probe, n.name(), v, problems);
    }
    if (problems.empty()) return v;
    if (v == kExportOpset) first = std::move(problems);
  }
  std::vector<std::string> what;
  for (const auto& [problem, nodes] : first) what.push_back(absl::StrCat(problem, " (node ", nodes.front(), ")"));
  return absl::FailedPreconditionError(absl::StrCat("no ONNX opset takes every node of the graph as it is: ",
                                                    absl::StrJoin(what, "; "), "; the model exports as NPU_GRAPH only"));
}

}  // namespace

absl::StatusOr<std::string> ExportOnnx(const v1::Graph& graph, const std::vector<v1::ValueInfo>& outputs) {
  if (outputs.size() != static_cast<size_t>(graph.outputs_size())) {
    return absl::InternalError(absl::StrCat("the export has ", outputs.size(), " output types for ",
                                            graph.outputs_size(), " outputs"));
  }
  for (const v1::Node& n : graph.nodes()) {
    if (auto s = CheckExportable(n); !s.ok()) return s;
  }
  auto version = ExportOpset(graph);
  if (!version.ok()) return version.status();
  ::onnx::ModelProto model;
  // The IR of the opset (ONNX's versioning table): 8 up to opset 17, 9 for 19-20, 10 for 21.
  model.set_ir_version(*version <= 18 ? 8 : *version <= 20 ? 9 : 10);
  model.set_producer_name("npuserve");
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(*version);
  ::onnx::GraphProto* g = model.mutable_graph();
  g->set_name(graph.name().empty() ? "graph" : graph.name());
  for (const v1::ValueInfo& in : graph.inputs()) ToOnnx(in, g->add_input());
  for (const v1::Initializer& init : graph.initializers()) ToOnnx(init.tensor(), init.name(), g->add_initializer());
  for (const v1::Node& n : graph.nodes()) {
    ::onnx::NodeProto* node = g->add_node();
    node->set_name(n.name());
    node->set_op_type(n.op_type());
    for (const std::string& in : n.inputs()) node->add_input(in);
    for (const std::string& out : n.outputs()) node->add_output(out);
    // In name order: the same graph exports to the same bytes (protobuf maps have no order).
    std::map<std::string, const v1::AttributeValue*> attributes;
    for (const auto& [name, value] : n.attributes()) attributes[name] = &value;
    for (const auto& [name, value] : attributes) ToOnnx(name, *value, node->add_attribute());
  }
  for (int i = 0; i < graph.outputs_size(); ++i) {
    v1::ValueInfo info = outputs[i];
    info.set_name(graph.outputs(i));
    ToOnnx(info, g->add_output());
  }
  std::string bytes;
  if (!model.SerializeToString(&bytes)) return absl::InternalError("the exported ONNX model does not serialize");
  return bytes;
}

}  // namespace npu::onnxio
