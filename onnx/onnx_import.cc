#include "onnx/onnx_import.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "onnx/opsets.h"
#include "onnx/supported_ops.h"
#include "server/graph/tensor_type.h"

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

// A DOUBLE constant (an initializer or a Constant's value: what torch's
// export makes of a Python float such as math.log(100.0)) as FLOAT: the
// device has no float64, and the ops it meets compute in fp32. Each value
// rounds to nearest (beyond fp32's range: inf, as a cast makes it).
absl::StatusOr<v1::Tensor> NarrowDoubleTensor(const TensorProto& t, const std::string& what) {
  auto type = graph::ValidateType(v1::FLOAT32, t.dims(), what);
  if (!type.ok()) return type.status();
  const int64_t n = type->elements();
  std::vector<double> values;
  if (t.has_raw_data()) {
    if (t.raw_data().size() != static_cast<size_t>(n) * sizeof(double)) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": has ", t.raw_data().size(), " bytes of data for ",
                                                     n * static_cast<int64_t>(sizeof(double))));
    }
    values.resize(static_cast<size_t>(n));
    // An empty tensor's vector has no buffer: memcpy to null is undefined even for 0 bytes.
    if (n > 0) std::memcpy(values.data(), t.raw_data().data(), t.raw_data().size());
  } else {
    if (t.double_data_size() != n) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": has ", t.double_data_size(), " values for ", n,
                                                     " elements"));
    }
    values.assign(t.double_data().begin(), t.double_data().end());
  }
  std::vector<float> narrow(values.begin(), values.end());
  v1::Tensor out;
  out.set_dtype(v1::FLOAT32);
  *out.mutable_shape() = t.dims();
  out.set_data(narrow.data(), narrow.size() * sizeof(float));
  return out;
}

// Raw bytes from raw_data (moved out of `raw` when given) or from the typed
// repeated fields (little-endian host). The dims are checked before anything
// is allocated: a hostile file cannot make the server allocate without bound.
absl::StatusOr<v1::Tensor> ConvertTensor(const TensorProto& t, std::string* raw, const std::string& what) {
  if (t.data_location() == TensorProto::EXTERNAL) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": external data is not supported (save the model "
                                                   "with its weights inside)"));
  }
  if (t.data_type() == TensorProto::DOUBLE) return NarrowDoubleTensor(t, what);
  auto dtype = MapType(t.data_type(), what);
  if (!dtype.ok()) return dtype.status();
  auto type = graph::ValidateType(*dtype, t.dims(), what);
  if (!type.ok()) return type.status();
  v1::Tensor out;
  out.set_dtype(*dtype);
  *out.mutable_shape() = t.dims();
  const int64_t n = type->elements();
  const size_t bytes = type->bytes();
  std::string data;
  if (raw != nullptr) {
    data = std::move(*raw);
  } else if (t.has_raw_data()) {
    data = t.raw_data();
  } else {
    // Counted before allocating: the values must be there.
    const int typed = std::max({t.float_data_size(), t.int32_data_size(), t.int64_data_size()});
    if (typed != n) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": has ", typed, " values for ", n, " elements"));
    }
    data.resize(bytes);
    char* p = data.data();
    // An empty tensor (Resize's unused roi) has no typed data to copy: memcpy from null is undefined.
    switch (n == 0 ? v1::DATA_TYPE_UNSPECIFIED : *dtype) {
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
  }
  if (data.size() != bytes) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": has ", data.size(), " bytes of data for ", bytes));
  }
  out.set_data(std::move(data));
  return out;
}

}  // namespace

absl::StatusOr<v1::Tensor> OnnxTensorToTensor(const TensorProto& t, const std::string& what) {
  return ConvertTensor(t, nullptr, what);
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


// Every unsupported op, attribute or domain, added to `problems`: one entry
// per kind of problem, with the nodes that have it.
void CollectUnsupported(const ::onnx::GraphProto& g, NodeProblems& problems) {
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    const std::string node = absl::StrCat("\"", NodeName(n, i), "\"");
    if (!n.domain().empty() && n.domain() != "ai.onnx") {
      problems[absl::StrCat("domain \"", n.domain(), "\" is not supported")].push_back(node);
      continue;
    }
    auto op = SupportedOps().find(n.op_type());
    if (op == SupportedOps().end()) {
      problems[absl::StrCat("op type \"", n.op_type(), "\" is not supported")].push_back(node);
      continue;
    }
    for (const auto& a : n.attribute()) {
      if (!op->second.contains(a.name())) {
        problems[absl::StrCat(n.op_type(), " attribute \"", a.name(), "\" is not supported")].push_back(node);
      }
    }
  }
}

// The problems, all at once: each with how many nodes have it and the first few names.
absl::Status ProblemsError(const NodeProblems& problems) {
  if (problems.empty()) return absl::OkStatus();
  std::vector<std::string> lines;
  for (const auto& [what, nodes] : problems) {
    std::vector<std::string> first(nodes.begin(), nodes.begin() + std::min<size_t>(nodes.size(), 3));
    lines.push_back(absl::StrCat(what, " (", nodes.size(), nodes.size() == 1 ? " node: " : " nodes: ",
                                 absl::StrJoin(first, ", "), nodes.size() > 3 ? ", ..." : "", ")"));
  }
  return absl::InvalidArgumentError(absl::StrCat("model has ", problems.size(), " unsupported element",
                                                 problems.size() == 1 ? "" : "s", ": ", absl::StrJoin(lines, "; ")));
}

// A tensor-typed value's dtype and dims (-1 for dim_param or an unknown dim).
absl::StatusOr<v1::ValueInfo> ValueInfoOf(const ::onnx::ValueInfoProto& v, const std::string& what) {
  if (!v.type().has_tensor_type()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " is not a tensor (sequence, map and optional values are not supported)"));
  }
  const auto& tt = v.type().tensor_type();
  auto dtype = MapType(tt.elem_type(), what);
  if (!dtype.ok()) return dtype.status();
  v1::ValueInfo info;
  info.set_name(v.name());
  info.set_dtype(*dtype);
  for (const auto& d : tt.shape().dim()) info.add_shape(d.has_dim_value() ? d.dim_value() : -1);
  return info;
}

}  // namespace

absl::StatusOr<ImportedModel> ImportOnnxModel(::onnx::ModelProto model) {
  auto opset = DefaultOpset(model);
  if (!opset.ok()) return opset.status();
  ::onnx::GraphProto& g = *model.mutable_graph();
  NodeProblems problems;
  AdaptToOpset(g, *opset, problems);  // names unnamed nodes, as NodeName would
  CollectUnsupported(g, problems);
  if (auto s = ProblemsError(problems); !s.ok()) return s;

  ImportedModel out;
  out.graph.set_name(g.name());
  std::set<std::string> initializer_names;
  for (auto& init : *g.mutable_initializer()) {
    const std::string what = absl::StrCat("initializer \"", init.name(), "\"");
    v1::Initializer* dst = out.graph.add_initializers();
    dst->set_name(init.name());
    initializer_names.insert(init.name());
    auto t = ConvertTensor(init, init.has_raw_data() ? init.mutable_raw_data() : nullptr, what);
    if (!t.ok()) return t.status();
    *dst->mutable_tensor() = *std::move(t);
  }
  for (const auto& in : g.input()) {
    if (initializer_names.contains(in.name())) continue;  // a default value, not fed by the caller
    auto info = ValueInfoOf(in, absl::StrCat("graph input \"", in.name(), "\""));
    if (!info.ok()) return info.status();
    *out.graph.add_inputs() = *std::move(info);
  }
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    v1::Node* node = out.graph.add_nodes();
    node->set_name(NodeName(n, i));
    node->set_op_type(n.op_type());
    for (const auto& s : n.input()) node->add_inputs(s);
    // ONNX leaves an optional output out with an empty name (LSTM's Y when only Y_h is read): trailing ones
    // are dropped, one before a named output gets a name of its own (a value nothing reads).
    int outputs = n.output_size();
    while (outputs > 0 && n.output(outputs - 1).empty()) --outputs;
    for (int j = 0; j < outputs; ++j) {
      node->add_outputs(n.output(j).empty() ? absl::StrCat(node->name(), ":unread_output_", j) : n.output(j));
    }
    for (const auto& a : n.attribute()) {
      auto v = ConvertAttribute(a, absl::StrCat("node \"", node->name(), "\" (", n.op_type(), ") attribute \"",
                                                a.name(), "\""));
      if (!v.ok()) return v.status();
      // A cast to DOUBLE casts to FLOAT: its float64 constants are FLOAT here too (NarrowDoubleTensor).
      if (n.op_type() == "Cast" && a.name() == "to" && v->i() == TensorProto::DOUBLE) v->set_i(TensorProto::FLOAT);
      (*node->mutable_attributes())[a.name()] = std::move(*v);
    }
  }
  for (const auto& o : g.output()) {
    out.graph.add_outputs(o.name());
    auto info = ValueInfoOf(o, absl::StrCat("graph output \"", o.name(), "\""));
    if (info.ok()) {
      out.outputs.push_back(*std::move(info));
    } else {
      out.outputs.emplace_back().set_name(o.name());
    }
  }
  return out;
}

absl::StatusOr<ImportedModel> ImportOnnxBytes(std::string bytes) {
  ::onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) {
    return absl::InvalidArgumentError("the ONNX model is not a valid onnx.ModelProto (protobuf parse failed)");
  }
  std::string().swap(bytes);  // the parsed model holds them now
  return ImportOnnxModel(std::move(model));
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

}  // namespace npu::onnxio
