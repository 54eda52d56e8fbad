#include "onnx/onnx_import.h"

#include <cstring>
#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "onnx/supported_ops.h"

namespace npu::onnxio {
namespace {

using ::onnx::AttributeProto;
using ::onnx::TensorProto;

absl::StatusOr<v1::DataType> MapType(int32_t onnx_type, const std::string& what) {
  switch (onnx_type) {
    case TensorProto::FLOAT: return v1::FLOAT32;
    case TensorProto::FLOAT16: return v1::FLOAT16;
    case TensorProto::INT32: return v1::INT32;
    case TensorProto::INT8: return v1::INT8;
    case TensorProto::BOOL: return v1::BOOL;
    case TensorProto::INT64: return v1::INT64;
    default:
      return absl::InvalidArgumentError(absl::StrCat(what, ": ONNX element type ",
                                                     TensorProto::DataType_Name(static_cast<TensorProto::DataType>(onnx_type)),
                                                     " is not supported (FLOAT, FLOAT16, INT32, INT8, BOOL, INT64)"));
  }
}

size_t ElementBytes(v1::DataType t) {
  switch (t) {
    case v1::FLOAT16: return 2;
    case v1::FLOAT32: case v1::INT32: return 4;
    case v1::INT8: case v1::BOOL: return 1;
    case v1::INT64: return 8;
    default: return 0;
  }
}

}  // namespace

// Raw bytes from raw_data or from the typed repeated fields (little-endian host).
absl::StatusOr<v1::Tensor> OnnxTensorToTensor(const TensorProto& t, const std::string& what) {
  if (t.data_location() == TensorProto::EXTERNAL) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": external data is not supported (save the model "
                                                   "with its weights inside)"));
  }
  auto dtype = MapType(t.data_type(), what);
  if (!dtype.ok()) return dtype.status();
  v1::Tensor out;
  out.set_dtype(*dtype);
  int64_t n = 1;
  for (int64_t d : t.dims()) {
    out.add_shape(d);
    n *= d;
  }
  const size_t bytes = static_cast<size_t>(n) * ElementBytes(*dtype);
  std::string data;
  if (t.has_raw_data()) {
    data = t.raw_data();
  } else {
    data.resize(bytes);
    char* p = data.data();
    switch (*dtype) {
      case v1::FLOAT32:
        if (t.float_data_size() == n) std::memcpy(p, t.float_data().data(), bytes);
        break;
      case v1::INT64:
        if (t.int64_data_size() == n) std::memcpy(p, t.int64_data().data(), bytes);
        break;
      case v1::INT32:
        if (t.int32_data_size() == n) std::memcpy(p, t.int32_data().data(), bytes);
        break;
      case v1::FLOAT16:  // int32_data holds the bit patterns
        for (int i = 0; i < t.int32_data_size() && i < n; ++i) {
          const uint16_t h = static_cast<uint16_t>(t.int32_data(i));
          std::memcpy(p + 2 * i, &h, 2);
        }
        break;
      case v1::INT8: case v1::BOOL:
        for (int i = 0; i < t.int32_data_size() && i < n; ++i) p[i] = static_cast<char>(t.int32_data(i));
        break;
      default: break;
    }
    const int typed = std::max({t.float_data_size(), t.int32_data_size(), t.int64_data_size()});
    if (typed != n) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": has ", typed, " values for ", n, " elements"));
    }
  }
  if (data.size() != bytes) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": has ", data.size(), " bytes of data for ", bytes));
  }
  out.set_data(std::move(data));
  return out;
}

namespace {

absl::StatusOr<v1::AttributeValue> ConvertAttribute(const AttributeProto& a, const std::string& what) {
  v1::AttributeValue v;
  switch (a.type()) {
    case AttributeProto::INT: v.set_i(a.i()); break;
    case AttributeProto::FLOAT: v.set_f(a.f()); break;
    case AttributeProto::STRING: v.set_s(a.s()); break;
    case AttributeProto::INTS: *v.mutable_ints()->mutable_values() = a.ints(); break;
    case AttributeProto::FLOATS: *v.mutable_floats()->mutable_values() = a.floats(); break;
    case AttributeProto::STRINGS:
      for (const auto& s : a.strings()) v.mutable_strings()->add_values(s);
      break;
    case AttributeProto::TENSOR: {
      auto t = OnnxTensorToTensor(a.t(), what);
      if (!t.ok()) return t.status();
      *v.mutable_t() = std::move(*t);
      break;
    }
    default:
      return absl::InvalidArgumentError(absl::StrCat(what, ": attribute type ",
                                                     AttributeProto::AttributeType_Name(a.type()),
                                                     " is not supported"));
  }
  return v;
}

std::string NodeName(const ::onnx::NodeProto& n, int i) {
  return n.name().empty() ? absl::StrCat(n.op_type(), "_", i) : n.name();
}

}  // namespace

absl::StatusOr<v1::Graph> OnnxModelToGraph(const ::onnx::ModelProto& model, const InputShapes& shapes) {
  const ::onnx::GraphProto& g = model.graph();
  // Every unsupported op, attribute or domain, reported at once.
  std::vector<std::string> problems;
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    const std::string label = absl::StrCat("node \"", NodeName(n, i), "\" (", n.op_type(), ")");
    if (!n.domain().empty() && n.domain() != "ai.onnx") {
      problems.push_back(absl::StrCat(label, ": domain \"", n.domain(), "\" is not supported"));
      continue;
    }
    auto op = SupportedOps().find(n.op_type());
    if (op == SupportedOps().end()) {
      problems.push_back(absl::StrCat(label, ": op type \"", n.op_type(), "\" is not supported"));
      continue;
    }
    for (const auto& a : n.attribute()) {
      if (!op->second.contains(a.name())) {
        problems.push_back(absl::StrCat(label, ": attribute \"", a.name(), "\" is not supported"));
      }
    }
  }
  if (!problems.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("model has ", problems.size(), " unsupported element",
                                                   problems.size() == 1 ? "" : "s", ": ",
                                                   absl::StrJoin(problems, "; ")));
  }

  v1::Graph out;
  out.set_name(g.name());
  std::set<std::string> initializer_names;
  for (const auto& init : g.initializer()) {
    const std::string what = absl::StrCat("initializer \"", init.name(), "\"");
    auto t = OnnxTensorToTensor(init, what);
    if (!t.ok()) return t.status();
    v1::Initializer* dst = out.add_initializers();
    dst->set_name(init.name());
    *dst->mutable_tensor() = std::move(*t);
    initializer_names.insert(init.name());
  }
  for (const auto& in : g.input()) {
    if (initializer_names.contains(in.name())) continue;  // a default value, not fed by the caller
    const std::string what = absl::StrCat("graph input \"", in.name(), "\"");
    if (!in.type().has_tensor_type()) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " is not a tensor (sequence, map and optional inputs are not supported)"));
    }
    const auto& tt = in.type().tensor_type();
    auto dtype = MapType(tt.elem_type(), what);
    if (!dtype.ok()) return dtype.status();
    v1::ValueInfo* vi = out.add_inputs();
    vi->set_name(in.name());
    vi->set_dtype(*dtype);
    auto given = shapes.find(in.name());
    if (given != shapes.end()) {
      for (int64_t d : given->second) vi->add_shape(d);
      continue;
    }
    for (const auto& d : tt.shape().dim()) {
      if (!d.has_dim_value()) {
        return absl::InvalidArgumentError(absl::StrCat(
            what, " has a dynamic dimension \"", d.dim_param(),
            "\"; export the model with static shapes (no dynamic_axes) or give the input's shape"));
      }
      vi->add_shape(d.dim_value());
    }
  }
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    // A Constant with a tensor value becomes an initializer, so the ops that
    // need constant inputs at plan time (Reshape's shape, Slice's starts, ...)
    // see its values, as they would a folded constant.
    if (n.op_type() == "Constant" && n.output_size() == 1 && n.attribute_size() == 1 &&
        n.attribute(0).name() == "value" && n.attribute(0).type() == AttributeProto::TENSOR) {
      auto t = OnnxTensorToTensor(n.attribute(0).t(), absl::StrCat("node \"", NodeName(n, i), "\" (Constant) value"));
      if (!t.ok()) return t.status();
      v1::Initializer* init = out.add_initializers();
      init->set_name(n.output(0));
      *init->mutable_tensor() = std::move(*t);
      continue;
    }
    v1::Node* node = out.add_nodes();
    node->set_name(NodeName(n, i));
    node->set_op_type(n.op_type());
    for (const auto& s : n.input()) node->add_inputs(s);
    for (const auto& s : n.output()) node->add_outputs(s);
    for (const auto& a : n.attribute()) {
      auto v = ConvertAttribute(a, absl::StrCat("node \"", node->name(), "\" (", n.op_type(), ") attribute \"",
                                                a.name(), "\""));
      if (!v.ok()) return v.status();
      (*node->mutable_attributes())[a.name()] = std::move(*v);
    }
  }
  for (const auto& o : g.output()) out.add_outputs(o.name());
  return out;
}

absl::StatusOr<::onnx::ModelProto> LoadOnnxFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return absl::NotFoundError(absl::StrCat("cannot open ONNX model \"", path, "\""));
  std::stringstream buf;
  buf << f.rdbuf();
  ::onnx::ModelProto model;
  if (!model.ParseFromString(buf.str())) {
    return absl::InvalidArgumentError(absl::StrCat("\"", path, "\" is not a valid ONNX model (protobuf parse failed)"));
  }
  return model;
}

absl::StatusOr<v1::Graph> LoadOnnxGraph(const std::string& path, const InputShapes& shapes) {
  auto model = LoadOnnxFile(path);
  if (!model.ok()) return model.status();
  auto graph = OnnxModelToGraph(*model, shapes);
  if (!graph.ok()) return absl::Status(graph.status().code(), absl::StrCat(path, ": ", graph.status().message()));
  if (graph->name().empty()) graph->set_name(path);
  return graph;
}

}  // namespace npu::onnxio
