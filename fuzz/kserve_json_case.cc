#include "fuzz/kserve_json_case.h"

#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/rpc/kserve_http_infer.h"

namespace npu::fuzz {
namespace {

std::string Number(ChoiceSource& src) {
  static const std::vector<std::string> numbers = {
      "0", "1", "-1", "0.5", "1e308", "-1e308", "1e400", "65504", "65520", "2147483648", "-2147483649",
      "9223372036854775807", "9223372036854775808", "18446744073709551616", "-0", "1.0", "3.4028235e38", "127", "-129",
      "1E-400"};
  return src.Pick(numbers);
}

// Any JSON value, up to `depth` levels of arrays and objects.
std::string Value(ChoiceSource& src, int depth) {
  switch (src.Below(depth > 0 ? 8 : 5)) {
    case 0: return Number(src);
    case 1: return src.Chance(50) ? "true" : "false";
    case 2: return "null";
    case 3: return src.Chance(80) ? "\"s\"" : "\"\\ud800\xff\"";
    case 4: return Number(src);
    case 5:
    case 6: {
      std::string a = "[";
      for (uint64_t i = 0, n = src.Below(4); i < n; ++i) a += (i ? "," : "") + Value(src, depth - 1);
      return a + "]";
    }
    default: {
      std::string o = "{";
      for (uint64_t i = 0, n = src.Below(3); i < n; ++i) o += absl::StrCat(i ? "," : "", "\"k", i, "\":", Value(src, depth - 1));
      return o + "}";
    }
  }
}

std::string Deep(ChoiceSource& src) {
  const size_t n = src.Chance(50) ? 30 + src.Below(10) : 1000 + src.Below(50000);
  const bool objects = src.Chance(30);
  std::string s;
  for (size_t i = 0; i < n; ++i) s += objects ? "{\"a\":" : "[";
  s += "1";
  for (size_t i = 0; i < n; ++i) s += objects ? "}" : "]";
  return s;
}

std::string Parameters(ChoiceSource& src) {
  if (src.Chance(5)) return Deep(src);
  if (src.Chance(10)) return Value(src, 3);
  static const std::vector<std::string> keys = {"npu_device", "npu_profile", "binary_data_output", "timeout",
                                                "binary_data", "binary_data_size", "npu_bogus", "sequence_id"};
  std::string o = "{";
  for (uint64_t i = 0, n = src.Below(4); i < n; ++i) {
    o += absl::StrCat(i ? "," : "", "\"", src.Pick(keys), "\":", src.Chance(10) ? Deep(src) : Value(src, 1));
  }
  return o + "}";
}

// Data for `elements` values nested per `shape` (or wrong on purpose).
std::string Data(ChoiceSource& src, const std::vector<int64_t>& shape, size_t dim) {
  if (src.Chance(3)) return Deep(src);
  if (dim == shape.size() || src.Chance(10)) return src.Chance(5) ? Value(src, 2) : Number(src);
  const int64_t n = std::min<int64_t>(shape[dim] < 0 ? 1 : shape[dim], 8) + (src.Chance(5) ? 1 : 0);
  std::string a = "[";
  for (int64_t i = 0; i < n; ++i) a += (i ? "," : "") + Data(src, shape, dim + 1);
  return a + "]";
}

}  // namespace

KserveBody GenerateKserveBody(ChoiceSource& src) {
  static const std::vector<std::string> dtypes = {"FP32", "FP16", "INT32", "INT8", "BOOL", "INT64", "UINT8", "BYTES",
                                                  "fp32", ""};
  KserveBody out;
  std::string binary;
  std::string j = "{";
  if (src.Chance(30)) j += "\"id\":" + (src.Chance(80) ? std::string("\"r\"") : Value(src, 2)) + ",";
  if (src.Chance(40)) j += "\"parameters\":" + Parameters(src) + ",";
  j += "\"inputs\":";
  if (src.Chance(5)) {
    j += Value(src, 3);
  } else {
    j += "[";
    for (uint64_t i = 0, n = src.Below(4); i < n; ++i) {
      std::vector<int64_t> shape;
      for (uint64_t d = 0, r = src.Below(src.Chance(5) ? 12 : 4); d < r; ++d) {
        shape.push_back(src.Chance(5) ? (src.Chance(50) ? -1 : int64_t{1} << 40) : static_cast<int64_t>(src.Below(4)));
      }
      std::string shape_text = "[";
      for (size_t d = 0; d < shape.size(); ++d) shape_text += (d ? "," : "") + std::to_string(shape[d]);
      shape_text += "]";
      if (src.Chance(5)) shape_text = src.Chance(50) ? Deep(src) : Value(src, 2);
      j += absl::StrCat(i ? "," : "", "{\"name\":\"in", i, "\",\"datatype\":\"", src.Pick(dtypes), "\",\"shape\":",
                        shape_text);
      if (src.Chance(25)) {
        const uint64_t size = src.Chance(80) ? src.Below(64) : uint64_t{1} << 42;
        j += absl::StrCat(",\"parameters\":{\"binary_data_size\":", size, "}");
        binary.append(static_cast<size_t>(std::min<uint64_t>(size, 64) + (src.Chance(10) ? 3 : 0)), '\x3c');
      } else {
        if (src.Chance(20)) j += ",\"parameters\":" + Parameters(src);
        j += ",\"data\":" + Data(src, shape, 0);
      }
      j += "}";
    }
    j += "]";
  }
  if (src.Chance(30)) {
    j += ",\"outputs\":[";
    for (uint64_t i = 0, n = src.Below(3); i < n; ++i) {
      j += absl::StrCat(i ? "," : "", "{\"name\":\"o", i, "\"", src.Chance(50) ? ",\"parameters\":" + Parameters(src) : "",
                        "}");
    }
    j += "]";
  }
  j += "}";
  if (src.Chance(10)) j.resize(src.Below(j.size() + 1));
  if (src.Chance(10) && !j.empty()) j[src.Below(j.size())] = static_cast<char>(src.Below(256));
  if (!binary.empty() || src.Chance(5)) out.header_length = src.Chance(90) ? j.size() : src.Below(j.size() + 10);
  out.body = j + binary;
  return out;
}

std::string CheckKserveBody(const KserveBody& body) {
  auto decoded = rpc::DecodeHttpInferRequest(body.body, body.header_length, "m", "");
  if (!decoded.ok()) {
    const absl::StatusCode code = decoded.status().code();
    if (code != absl::StatusCode::kInvalidArgument && code != absl::StatusCode::kOutOfRange) {
      return absl::StrCat("the decoder answered ", decoded.status().ToString().substr(0, 300));
    }
    if (decoded.status().message().size() > 4096) {
      return absl::StrCat("an error of ", decoded.status().message().size(), " bytes");
    }
    return "";
  }
  for (const rpc::InferTensor& t : decoded->request.inputs) {
    if (t.tensor.bytes() > 0 && t.tensor.data() == nullptr) return absl::StrCat("input \"", t.name, "\" has no data");
  }
  return "";
}

}  // namespace npu::fuzz
