#include "server/rpc/kserve_grpc_codec.h"

#include <type_traits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/graph/bounded_text.h"
#include "server/rpc/kserve_datatype.h"
#include "server/rpc/kserve_tensor.h"

namespace npu::rpc {
namespace {

using inference::InferTensorContents;

// The field of InferTensorContents that holds `dtype`; null for FP16.
const char* ContentsField(v1::DataType dtype) {
  switch (dtype) {
    case v1::FLOAT32: return "fp32_contents";
    case v1::INT32:
    case v1::INT8: return "int_contents";
    case v1::INT64: return "int64_contents";
    case v1::BOOL: return "bool_contents";
    default: return nullptr;
  }
}

// Data in a field other than the datatype's is a client's mistake worth naming.
absl::Status CheckNoOtherField(const InferTensorContents& c, const char* field, const std::string& what,
                               v1::DataType dtype) {
  const std::pair<absl::string_view, int> sizes[] = {
      {"bool_contents", c.bool_contents_size()},     {"int_contents", c.int_contents_size()},
      {"int64_contents", c.int64_contents_size()},   {"uint_contents", c.uint_contents_size()},
      {"uint64_contents", c.uint64_contents_size()}, {"fp32_contents", c.fp32_contents_size()},
      {"fp64_contents", c.fp64_contents_size()},     {"bytes_contents", c.bytes_contents_size()},
  };
  for (const auto& [name, size] : sizes) {
    if (size > 0 && name != field) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": ", KserveDataTypeName(dtype), " data goes in contents.",
                                                     field, "; the request sets contents.", name));
    }
  }
  return absl::OkStatus();
}

template <typename T, typename Values>
absl::StatusOr<graph::HostTensor> Fill(const graph::TensorType& type, const Values& values, const std::string& what,
                                       const char* field) {
  if (values.size() != type.elements()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": ", KserveDataTypeName(type.dtype),
                                                   graph::ShapeToString(type.shape), " has ", type.elements(),
                                                   " elements; contents.", field, " has ", values.size()));
  }
  graph::HostTensor t = graph::HostTensor::Allocate(type);
  T* out = t.mutable_as<T>();
  for (int i = 0; i < values.size(); ++i) {
    if constexpr (std::is_same_v<T, int8_t>) {
      if (values[i] < -128 || values[i] > 127) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, ": INT8 element ", i, " is ", values[i], ", outside -128..127"));
      }
    }
    out[i] = static_cast<T>(values[i]);
  }
  return t;
}

absl::StatusOr<graph::HostTensor> DecodeContents(const graph::TensorType& type, const InferTensorContents& c,
                                                 const std::string& what) {
  const char* field = ContentsField(type.dtype);
  if (field == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": FP16 has no typed contents field in the protocol; send its bytes in raw_input_contents"));
  }
  if (auto s = CheckNoOtherField(c, field, what, type.dtype); !s.ok()) return s;
  switch (type.dtype) {
    case v1::FLOAT32: return Fill<float>(type, c.fp32_contents(), what, field);
    case v1::INT32: return Fill<int32_t>(type, c.int_contents(), what, field);
    case v1::INT8: return Fill<int8_t>(type, c.int_contents(), what, field);
    case v1::INT64: return Fill<int64_t>(type, c.int64_contents(), what, field);
    default: return Fill<uint8_t>(type, c.bool_contents(), what, field);  // BOOL: one byte, 0 or 1
  }
}

void EncodeContents(const graph::HostTensor& t, InferTensorContents* c) {
  const int64_t n = t.type().elements();
  switch (t.type().dtype) {
    case v1::FLOAT32: c->mutable_fp32_contents()->Add(t.as<float>(), t.as<float>() + n); break;
    case v1::INT32: c->mutable_int_contents()->Add(t.as<int32_t>(), t.as<int32_t>() + n); break;
    case v1::INT8: c->mutable_int_contents()->Add(t.as<int8_t>(), t.as<int8_t>() + n); break;
    case v1::INT64: c->mutable_int64_contents()->Add(t.as<int64_t>(), t.as<int64_t>() + n); break;
    case v1::BOOL:
      for (int64_t i = 0; i < n; ++i) c->add_bool_contents(t.as<uint8_t>()[i] != 0);
      break;
    default: break;  // FP16 is always sent raw
  }
}

}  // namespace

absl::StatusOr<InferRequest> DecodeInferRequest(const inference::ModelInferRequest& req) {
  InferRequest out{req.model_name(), req.model_version(), req.id(), req.parameters(), {}, {}};
  const bool raw = req.raw_input_contents_size() > 0;
  if (raw && req.raw_input_contents_size() != req.inputs_size()) {
    return absl::InvalidArgumentError(absl::StrCat("raw_input_contents has ", req.raw_input_contents_size(),
                                                   " entries for ", req.inputs_size(),
                                                   " inputs; it takes one per input, in the order of inputs"));
  }
  for (int i = 0; i < req.inputs_size(); ++i) {
    const auto& in = req.inputs(i);
    if (in.name().empty()) return absl::InvalidArgumentError(absl::StrCat("inputs[", i, "] has no name"));
    const std::string what = absl::StrCat("input ", graph::Quoted(in.name()));
    auto type = DeclaredType(in.datatype(), in.shape(), what);
    if (!type.ok()) return type.status();
    absl::StatusOr<graph::HostTensor> tensor;
    if (raw) {
      if (in.has_contents()) {
        return absl::InvalidArgumentError(absl::StrCat(
            what, " sets contents while the request carries raw_input_contents; use one form for every input"));
      }
      tensor = ViewRawTensor(*type, req.raw_input_contents(i), what, absl::StrCat("raw_input_contents[", i, "]"));
    } else {
      tensor = DecodeContents(*type, in.contents(), what);
    }
    if (!tensor.ok()) return tensor.status();
    out.inputs.push_back({in.name(), *std::move(tensor)});
  }
  for (const auto& o : req.outputs()) out.outputs.push_back({o.name(), o.parameters()});
  return out;
}

void EncodeInferResponse(InferResult result, bool raw, inference::ModelInferResponse* resp) {
  for (const InferTensor& o : result.outputs) raw = raw || ContentsField(o.tensor.type().dtype) == nullptr;
  resp->set_model_name(std::move(result.model_name));
  resp->set_model_version(std::move(result.model_version));
  resp->set_id(std::move(result.id));
  *resp->mutable_parameters() = std::move(result.parameters);
  for (const InferTensor& o : result.outputs) {
    auto* out = resp->add_outputs();
    out->set_name(o.name);
    out->set_datatype(KserveDataTypeName(o.tensor.type().dtype));
    for (int64_t d : o.tensor.type().shape) out->add_shape(d);
    if (raw) {
      resp->add_raw_output_contents()->assign(reinterpret_cast<const char*>(o.tensor.data()), o.tensor.bytes());
    } else {
      EncodeContents(o.tensor, out->mutable_contents());
    }
  }
}

}  // namespace npu::rpc
