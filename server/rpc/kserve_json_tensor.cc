#include "server/rpc/kserve_json_tensor.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/fp16.h"
#include "server/graph/bounded_text.h"
#include "server/rpc/kserve_datatype.h"
#include "server/rpc/kserve_json_parse.h"

namespace npu::rpc {
namespace {

using nlohmann::json;

// Counts the scalars of `v`, refusing arrays nested deeper than `max_depth`
// (so a hostile "[[[[...]]]]" costs no recursion past the tensor's rank).
absl::Status Count(const json& v, int depth, int max_depth, int64_t& n, const std::string& what) {
  if (!v.is_array()) {
    ++n;
    return absl::OkStatus();
  }
  if (depth == max_depth) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": data nests arrays deeper than the tensor's ", max_depth, " dimension(s)"));
  }
  for (const json& e : v) {
    if (auto s = Count(e, depth + 1, max_depth, n, what); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// Calls `f(scalar, flat_index)` for every scalar in row-major order (Count
// already bounded the depth).
template <typename F>
absl::Status Visit(const json& v, int64_t& i, F& f) {
  if (!v.is_array()) return f(v, i++);
  for (const json& e : v) {
    if (auto s = Visit(e, i, f); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status ElementError(const std::string& what, int64_t i, const json& v, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(what, ": element ", i, " of data (", JsonExcerpt(v), ") ", why));
}

// The nearest half to `d`, ties to even. Rounding through float first could
// land on a half-way point `d` was not on, so the neighbours are compared in
// double.
absl::StatusOr<kernels::half_bits> NearestHalf(double d) {
  if (std::fabs(d) >= 65520.0) return absl::OutOfRangeError("is beyond FP16's largest value 65504");
  const kernels::half_bits h = kernels::FloatToHalf(static_cast<float>(d));
  const kernels::half_bits sign = h & 0x8000;
  const double target = std::fabs(d);
  int best = h & 0x7fff;
  double best_err = std::fabs(kernels::HalfToFloat(static_cast<kernels::half_bits>(best)) - target);
  for (int m : {best - 1, best + 1}) {
    if (m < 0 || m > kernels::kHalfMaxBits) continue;
    const double err = std::fabs(kernels::HalfToFloat(static_cast<kernels::half_bits>(m)) - target);
    if (err < best_err || (err == best_err && m % 2 == 0)) {
      best = m;
      best_err = err;
    }
  }
  return static_cast<kernels::half_bits>(sign | best);
}

// An integer JSON value (or an integral float) within [lo, hi].
absl::StatusOr<int64_t> IntegerIn(const json& v, int64_t lo, int64_t hi) {
  int64_t x = 0;
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(hi)) return absl::OutOfRangeError("");
    x = static_cast<int64_t>(u);
  } else if (v.is_number_integer()) {
    x = v.get<int64_t>();
  } else if (v.is_number_float()) {
    const double d = v.get<double>();
    if (d != std::trunc(d)) return absl::InvalidArgumentError("is not an integer");
    // 2^63 is the first double past INT64_MAX.
    if (d < -9223372036854775808.0 || d >= 9223372036854775808.0) return absl::OutOfRangeError("");
    x = static_cast<int64_t>(d);
  } else {
    return absl::InvalidArgumentError("is not a number");
  }
  if (x < lo || x > hi) return absl::OutOfRangeError("");
  return x;
}

template <typename T>
absl::Status FillIntegers(const json& data, graph::HostTensor& t, const std::string& what) {
  T* out = t.mutable_as<T>();
  constexpr int64_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  auto f = [&](const json& v, int64_t i) -> absl::Status {
    auto x = IntegerIn(v, lo, hi);
    if (absl::IsOutOfRange(x.status())) {
      return ElementError(what, i, v,
                          absl::StrCat("is outside ", KserveDataTypeName(t.type().dtype), "'s range ", lo, "..", hi));
    }
    if (!x.ok()) return ElementError(what, i, v, x.status().message());
    out[i] = static_cast<T>(*x);
    return absl::OkStatus();
  };
  int64_t i = 0;
  return Visit(data, i, f);
}

absl::Status FillFloats(const json& data, graph::HostTensor& t, const std::string& what) {
  const bool half = t.type().dtype == v1::FLOAT16;
  auto f = [&](const json& v, int64_t i) -> absl::Status {
    if (!v.is_number()) return ElementError(what, i, v, "is not a number");
    const double d = v.get<double>();
    if (!half) {
      t.mutable_as<float>()[i] = static_cast<float>(d);
      return absl::OkStatus();
    }
    auto h = NearestHalf(d);
    if (!h.ok()) return ElementError(what, i, v, h.status().message());
    t.mutable_as<kernels::half_bits>()[i] = *h;
    return absl::OkStatus();
  };
  int64_t i = 0;
  return Visit(data, i, f);
}

absl::Status FillBools(const json& data, graph::HostTensor& t, const std::string& what) {
  auto f = [&](const json& v, int64_t i) -> absl::Status {
    if (v.is_boolean()) {
      t.mutable_as<uint8_t>()[i] = v.get<bool>() ? 1 : 0;
    } else if (v.is_number_integer() && (v.get<int64_t>() == 0 || v.get<int64_t>() == 1)) {
      t.mutable_as<uint8_t>()[i] = static_cast<uint8_t>(v.get<int64_t>());
    } else {
      return ElementError(what, i, v, "is not a boolean");
    }
    return absl::OkStatus();
  };
  int64_t i = 0;
  return Visit(data, i, f);
}

json Number(float f) { return std::isfinite(f) ? json(static_cast<double>(f)) : json(nullptr); }

}  // namespace

absl::StatusOr<graph::HostTensor> TensorFromJson(const graph::TensorType& type, const json& data,
                                                 const std::string& what) {
  if (!data.is_array()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": \"data\" must be a JSON array, got ", JsonExcerpt(data)));
  }
  int64_t n = 0;
  const int max_depth = std::max<int>(1, static_cast<int>(type.shape.size()));
  if (auto s = Count(data, 0, max_depth, n, what); !s.ok()) return s;
  if (n != type.elements()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": ", KserveDataTypeName(type.dtype),
                                                   graph::ShapeToString(type.shape), " has ", type.elements(),
                                                   " elements; data has ", n));
  }
  graph::HostTensor t = graph::HostTensor::Allocate(type);
  absl::Status s;
  switch (type.dtype) {
    case v1::FLOAT16:
    case v1::FLOAT32: s = FillFloats(data, t, what); break;
    case v1::INT8: s = FillIntegers<int8_t>(data, t, what); break;
    case v1::INT32: s = FillIntegers<int32_t>(data, t, what); break;
    case v1::INT64: s = FillIntegers<int64_t>(data, t, what); break;
    default: s = FillBools(data, t, what); break;
  }
  if (!s.ok()) return s;
  return t;
}

json TensorToJson(const graph::HostTensor& t) {
  const int64_t n = t.type().elements();
  json out = json::array();
  auto& a = out.get_ref<json::array_t&>();
  a.reserve(static_cast<size_t>(n));
  switch (t.type().dtype) {
    case v1::FLOAT16: {
      std::vector<float> f(static_cast<size_t>(n));
      kernels::HalfToFloatN(t.as<kernels::half_bits>(), f.data(), f.size());
      for (float x : f) a.push_back(Number(x));
      break;
    }
    case v1::FLOAT32:
      for (int64_t i = 0; i < n; ++i) a.push_back(Number(t.as<float>()[i]));
      break;
    case v1::INT8:
      for (int64_t i = 0; i < n; ++i) a.push_back(t.as<int8_t>()[i]);
      break;
    case v1::INT32:
      for (int64_t i = 0; i < n; ++i) a.push_back(t.as<int32_t>()[i]);
      break;
    case v1::INT64:
      for (int64_t i = 0; i < n; ++i) a.push_back(t.as<int64_t>()[i]);
      break;
    default:
      for (int64_t i = 0; i < n; ++i) a.push_back(t.as<uint8_t>()[i] != 0);
      break;
  }
  return out;
}

absl::StatusOr<InferParameters> ParametersFromJson(const json& object, const std::string& what) {
  if (!object.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " \"parameters\" must be a JSON object, got ", JsonExcerpt(object)));
  }
  InferParameters out;
  for (const auto& [key, v] : object.items()) {
    inference::InferParameter& p = out[key];
    if (v.is_boolean()) {
      p.set_bool_param(v.get<bool>());
    } else if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      p.set_uint64_param(v.get<uint64_t>());
    } else if (v.is_number_integer()) {
      p.set_int64_param(v.get<int64_t>());
    } else if (v.is_number_float()) {
      p.set_double_param(v.get<double>());
    } else if (v.is_string()) {
      p.set_string_param(v.get<std::string>());
    } else {
      return absl::InvalidArgumentError(absl::StrCat(what, " parameter ", graph::Quoted(key),
                                                     " must be a string, number or boolean, got ", JsonExcerpt(v)));
    }
  }
  return out;
}

json ParametersToJson(const InferParameters& params) {
  json out = json::object();
  for (const auto& [key, p] : params) {
    switch (p.parameter_choice_case()) {
      case inference::InferParameter::kBoolParam: out[key] = p.bool_param(); break;
      case inference::InferParameter::kInt64Param: out[key] = p.int64_param(); break;
      case inference::InferParameter::kStringParam: out[key] = p.string_param(); break;
      case inference::InferParameter::kDoubleParam: out[key] = p.double_param(); break;
      case inference::InferParameter::kUint64Param: out[key] = p.uint64_param(); break;
      default: out[key] = nullptr; break;
    }
  }
  return out;
}

}  // namespace npu::rpc
