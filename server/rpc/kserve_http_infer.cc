#include "server/rpc/kserve_http_infer.h"

#include <utility>

#include <google/protobuf/repeated_field.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "server/graph/bounded_text.h"
#include "server/rpc/kserve_datatype.h"
#include "server/rpc/kserve_json_parse.h"
#include "server/rpc/kserve_json_tensor.h"
#include "server/rpc/kserve_tensor.h"

namespace npu::rpc {
namespace {

using nlohmann::json;

constexpr char kBinaryDataSize[] = "binary_data_size";

absl::StatusOr<json> ParseJson(absl::string_view text, bool framed) {
  auto parsed = ParseClientJson(text);
  // Bytes after a complete JSON object are binary data sent without saying where the JSON ends.
  if (!parsed.ok() && !framed && absl::StrContains(parsed.status().message(), "expected end of input")) {
    return absl::InvalidArgumentError(
        absl::StrCat(parsed.status().message(),
                     " (binary data after the JSON needs the Inference-Header-Content-Length header)"));
  }
  return parsed;
}

// A member that must be a string when present; "" when absent.
absl::StatusOr<std::string> OptionalString(const json& object, const char* key, const std::string& what) {
  auto it = object.find(key);
  if (it == object.end()) return std::string();
  if (!it->is_string()) return absl::InvalidArgumentError(absl::StrCat(what, " \"", key, "\" must be a string"));
  return it->get<std::string>();
}

absl::StatusOr<InferParameters> OptionalParameters(const json& object, const std::string& what) {
  auto it = object.find("parameters");
  if (it == object.end()) return InferParameters();
  return ParametersFromJson(*it, what);
}

absl::StatusOr<google::protobuf::RepeatedField<int64_t>> Shape(const json& input, const std::string& what) {
  auto it = input.find("shape");
  if (it == input.end() || !it->is_array()) {
    return absl::InvalidArgumentError(absl::StrCat(what, " needs \"shape\", an array of dimensions"));
  }
  google::protobuf::RepeatedField<int64_t> shape;
  for (const json& d : *it) {
    if (!d.is_number_integer()) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": shape dimension ", JsonExcerpt(d), " is not an integer"));
    }
    if (d.is_number_unsigned() && d.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": shape dimension ", JsonExcerpt(d), " is too large"));
    }
    shape.Add(d.get<int64_t>());
  }
  return shape;
}

// The binary section of the body, consumed input by input.
struct BinarySection {
  absl::string_view bytes;
  size_t used = 0;
};

absl::StatusOr<InferTensor> DecodeInput(const json& input, size_t index, BinarySection& binary,
                                        bool has_binary_section) {
  if (!input.is_object()) return absl::InvalidArgumentError(absl::StrCat("inputs[", index, "] is not an object"));
  auto name = OptionalString(input, "name", absl::StrCat("inputs[", index, "]"));
  if (!name.ok()) return name.status();
  if (name->empty()) return absl::InvalidArgumentError(absl::StrCat("inputs[", index, "] has no \"name\""));
  const std::string what = absl::StrCat("input ", graph::Quoted(*name));
  auto datatype = OptionalString(input, "datatype", what);
  if (!datatype.ok()) return datatype.status();
  if (datatype->empty()) return absl::InvalidArgumentError(absl::StrCat(what, " has no \"datatype\""));
  auto shape = Shape(input, what);
  if (!shape.ok()) return shape.status();
  auto type = DeclaredType(*datatype, *shape, what);
  if (!type.ok()) return type.status();
  auto params = OptionalParameters(input, what);
  if (!params.ok()) return params.status();

  auto size = params->find(kBinaryDataSize);
  const bool has_data = input.contains("data");
  if (size == params->end()) {
    if (!has_data) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " has neither \"data\" nor a \"", kBinaryDataSize, "\" parameter"));
    }
    auto tensor = TensorFromJson(*type, input["data"], what);
    if (!tensor.ok()) return tensor.status();
    return InferTensor{*std::move(name), *std::move(tensor)};
  }
  if (has_data) {
    return absl::InvalidArgumentError(absl::StrCat(what, " has both \"data\" and \"", kBinaryDataSize, "\""));
  }
  if (!has_binary_section) {
    return absl::InvalidArgumentError(absl::StrCat(what, " sets \"", kBinaryDataSize,
                                                   "\" but the request has no Inference-Header-Content-Length "
                                                   "header saying where the JSON ends and the binary data begins"));
  }
  if (size->second.parameter_choice_case() != inference::InferParameter::kInt64Param ||
      size->second.int64_param() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": \"", kBinaryDataSize, "\" must be a non-negative integer (bytes)"));
  }
  const auto n = static_cast<uint64_t>(size->second.int64_param());
  if (n > binary.bytes.size() - binary.used) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": ", kBinaryDataSize, " ", n, " runs past the end of the ",
                                                   binary.bytes.size(), " bytes of binary data (", binary.used,
                                                   " taken by earlier inputs)"));
  }
  const absl::string_view bytes = binary.bytes.substr(binary.used, n);
  auto tensor = ViewRawTensor(*type, bytes, what, absl::StrCat("its binary data (", kBinaryDataSize, " ", n, ")"));
  if (!tensor.ok()) return tensor.status();
  binary.used += n;
  return InferTensor{*std::move(name), *std::move(tensor)};
}

absl::StatusOr<RequestedOutput> DecodeOutput(const json& output, size_t index) {
  if (!output.is_object()) return absl::InvalidArgumentError(absl::StrCat("outputs[", index, "] is not an object"));
  auto name = OptionalString(output, "name", absl::StrCat("outputs[", index, "]"));
  if (!name.ok()) return name.status();
  if (name->empty()) return absl::InvalidArgumentError(absl::StrCat("outputs[", index, "] has no \"name\""));
  auto params = OptionalParameters(output, absl::StrCat("output ", graph::Quoted(*name)));
  if (!params.ok()) return params.status();
  return RequestedOutput{*std::move(name), *std::move(params)};
}

}  // namespace

absl::StatusOr<HttpInferRequest> DecodeHttpInferRequest(absl::string_view body, std::optional<uint64_t> header_length,
                                                        std::string model_name, std::string model_version) {
  if (header_length && *header_length > body.size()) {
    return absl::InvalidArgumentError(absl::StrCat("Inference-Header-Content-Length is ", *header_length,
                                                   " but the body has only ", body.size(), " bytes"));
  }
  const size_t json_bytes = header_length ? static_cast<size_t>(*header_length) : body.size();
  auto parsed = ParseJson(body.substr(0, json_bytes), header_length.has_value());
  if (!parsed.ok()) return parsed.status();
  const json& root = *parsed;
  if (!root.is_object()) return absl::InvalidArgumentError("the inference request must be a JSON object");

  HttpInferRequest out;
  InferRequest& req = out.request;
  req.model_name = std::move(model_name);
  req.model_version = std::move(model_version);
  auto id = OptionalString(root, "id", "the request's");
  if (!id.ok()) return id.status();
  req.id = *std::move(id);
  auto params = OptionalParameters(root, "request");
  if (!params.ok()) return params.status();
  req.parameters = *std::move(params);
  auto binary_default = BoolParameter(req.parameters, "binary_data_output", false, "request");
  if (!binary_default.ok()) return binary_default.status();
  out.binary_output_default = *binary_default;
  if (auto t = req.parameters.find("timeout"); t != req.parameters.end()) {
    if (t->second.parameter_choice_case() != inference::InferParameter::kInt64Param || t->second.int64_param() <= 0) {
      return absl::InvalidArgumentError("request parameter \"timeout\" must be a positive integer (microseconds)");
    }
    out.timeout = std::chrono::microseconds(t->second.int64_param());
  }

  auto inputs = root.find("inputs");
  if (inputs == root.end() || !inputs->is_array()) {
    return absl::InvalidArgumentError("the inference request needs \"inputs\", an array of tensors");
  }
  BinarySection binary{body.substr(json_bytes)};
  for (size_t i = 0; i < inputs->size(); ++i) {
    auto in = DecodeInput((*inputs)[i], i, binary, header_length.has_value());
    if (!in.ok()) return in.status();
    req.inputs.push_back(*std::move(in));
  }
  if (binary.used != binary.bytes.size()) {
    return absl::InvalidArgumentError(absl::StrCat(binary.bytes.size(),
                                                   " bytes of binary data follow the JSON, but "
                                                   "the inputs' ",
                                                   kBinaryDataSize, " parameters add up to ", binary.used));
  }
  if (auto outputs = root.find("outputs"); outputs != root.end()) {
    if (!outputs->is_array()) return absl::InvalidArgumentError("\"outputs\" must be an array");
    for (size_t i = 0; i < outputs->size(); ++i) {
      auto o = DecodeOutput((*outputs)[i], i);
      if (!o.ok()) return o.status();
      auto binary_data = BoolParameter(o->parameters, "binary_data", out.binary_output_default,
                                       absl::StrCat("output ", graph::Quoted(o->name)));
      if (!binary_data.ok()) return binary_data.status();
      out.binary_outputs.push_back(*binary_data);
      req.outputs.push_back(*std::move(o));
    }
  }
  return out;
}

HttpInferResponse EncodeHttpInferResponse(const InferResult& result, const HttpInferRequest& asked) {
  json root = json::object();
  root["model_name"] = result.model_name;
  root["model_version"] = result.model_version;
  if (!result.id.empty()) root["id"] = result.id;
  root["parameters"] = ParametersToJson(result.parameters);
  json outputs = json::array();
  std::vector<const graph::HostTensor*> binary;
  for (size_t i = 0; i < result.outputs.size(); ++i) {
    const graph::HostTensor& t = result.outputs[i].tensor;
    json o = json::object();
    o["name"] = result.outputs[i].name;
    o["datatype"] = KserveDataTypeName(t.type().dtype);
    o["shape"] = t.type().shape;
    const bool as_binary = i < asked.binary_outputs.size() ? asked.binary_outputs[i] : asked.binary_output_default;
    if (as_binary) {
      o["parameters"] = json{{kBinaryDataSize, t.bytes()}};
      binary.push_back(&t);
    } else {
      o["data"] = TensorToJson(t);
    }
    outputs.push_back(std::move(o));
  }
  root["outputs"] = std::move(outputs);

  HttpInferResponse out;
  // Names from the URL may hold any bytes: invalid UTF-8 is replaced, never thrown on.
  out.body = root.dump(-1, ' ', false, json::error_handler_t::replace);
  out.header_length = out.body.size();
  out.binary = !binary.empty();
  for (const graph::HostTensor* t : binary) out.body.append(reinterpret_cast<const char*>(t->data()), t->bytes());
  return out;
}

}  // namespace npu::rpc
