#include "fuzz/op_reference.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>

#include "absl/strings/str_cat.h"
#include "server/graph/tensor_type.h"

namespace npu::fuzz {
namespace {

using graph::DataType;
using graph::HostTensor;
using graph::Shape;
using graph::TensorType;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kHalfMax = 65504.0;

// IEEE binary16 bits -> double, exactly.
double HalfBitsToDouble(uint16_t h) {
  const int sign = h >> 15, exp = (h >> 10) & 0x1F, mant = h & 0x3FF;
  double v;
  if (exp == 0) {
    v = std::ldexp(mant, -24);
  } else if (exp == 31) {
    v = mant == 0 ? std::numeric_limits<double>::infinity() : kNaN;
  } else {
    v = std::ldexp(1024 + mant, exp - 25);
  }
  return sign ? -v : v;
}

// double -> nearest binary16 value (ties to even), as a double; inf beyond the range.
double RoundToHalf(double v) {
  if (std::isnan(v) || std::isinf(v) || v == 0) return v;
  const double a = std::fabs(v);
  if (a >= 65520.0) return std::copysign(std::numeric_limits<double>::infinity(), v);  // 65520 ties to 65536
  int e = std::ilogb(a);
  if (e < -14) e = -14;  // subnormals share the smallest exponent's spacing
  const double ulp = std::ldexp(1.0, e - 10);
  return std::copysign(std::nearbyint(a / ulp) * ulp, v);  // a / ulp is exact: ulp is a power of two
}

bool IsFloat(DataType t) { return t == v1::FLOAT16 || t == v1::FLOAT32; }

// A float result stored as `t`: rounded once, saturated when the device saturates fp16.
double StoreFloat(double v, DataType t, bool saturate) {
  if (t == v1::FLOAT32) return static_cast<double>(static_cast<float>(v));
  double h = RoundToHalf(v);
  if (saturate) {
    if (std::isnan(h)) return 0.0;
    if (std::isinf(h)) return std::copysign(kHalfMax, h);
  }
  return h;
}

// Integer results wrap to the width of `t` (two's complement).
int64_t WrapTo(uint64_t bits, DataType t) {
  switch (t) {
    case v1::INT8: return static_cast<int8_t>(static_cast<uint8_t>(bits));
    case v1::INT32: return static_cast<int32_t>(static_cast<uint32_t>(bits));
    case v1::BOOL: return bits != 0;
    default: return static_cast<int64_t>(bits);
  }
}

// One element of any tensor, as both views the reference needs.
struct Element {
  double f = 0;     // the value (integers beyond 2^53 approximate)
  int64_t i = 0;    // the integer value (floats: unused)
  bool is_float = false;
};

Element Load(const HostTensor& t, int64_t k) {
  Element e;
  switch (t.type().dtype) {
    case v1::FLOAT16: {
      uint16_t bits;
      std::memcpy(&bits, t.data() + 2 * k, 2);
      e.f = HalfBitsToDouble(bits);
      e.is_float = true;
      break;
    }
    case v1::FLOAT32: e.f = t.as<float>()[k], e.is_float = true; break;
    case v1::INT32: e.i = t.as<int32_t>()[k]; break;
    case v1::INT64: e.i = t.as<int64_t>()[k]; break;
    case v1::INT8: e.i = t.as<int8_t>()[k]; break;
    case v1::BOOL: e.i = t.as<uint8_t>()[k]; break;
    default: break;
  }
  if (!e.is_float) e.f = static_cast<double>(e.i);
  return e;
}

// Offset into an input of shape `in` of output element `k` of shape `out`
// (NumPy broadcasting: right-aligned, size-1 dims repeat).
int64_t BroadcastOffset(const Shape& in, const Shape& out, int64_t k) {
  int64_t offset = 0, stride = 1;
  for (size_t d = 0; d < out.size(); ++d) {
    const size_t od = out.size() - 1 - d;
    const int64_t index = k % out[od];
    k /= out[od];
    if (d < in.size()) {
      const int64_t dim = in[in.size() - 1 - d];
      if (dim != 1) offset += index * stride;
      stride *= dim;
    }
  }
  return offset;
}

double FloatAttr(const v1::Node& node, const std::string& name, double fallback) {
  auto it = node.attributes().find(name);
  if (it == node.attributes().end()) return fallback;
  if (it->second.value_case() == v1::AttributeValue::kI) return static_cast<float>(it->second.i());
  return it->second.f();
}

struct Unary {
  std::function<double(double)> f;
  Closeness closeness;
  bool nan_checked = true;  // false: what the op does with a NaN input is not specified
};

std::optional<Unary> UnaryFor(const v1::Node& node) {
  const std::string& op = node.op_type();
  const auto sigmoid = [](double x) { return 1 / (1 + std::exp(-x)); };
  static const std::map<std::string, Unary>* table = nullptr;
  if (op == "LeakyRelu") {
    const double alpha = static_cast<float>(FloatAttr(node, "alpha", 0.01f));
    // The product rounded to fp32 (the op's compute type), then stored.
    return Unary{[alpha](double x) { return x < 0 ? static_cast<double>(static_cast<float>(alpha * x)) : x; },
                 Closeness::kExact, true};
  }
  if (op == "HardSigmoid") {
    const double alpha = static_cast<float>(FloatAttr(node, "alpha", 0.2f));
    const double beta = static_cast<float>(FloatAttr(node, "beta", 0.5f));
    // alpha * x and + beta each rounded to fp32, as torch computes it; then clamped to [0, 1], NaN kept.
    return Unary{[alpha, beta](double x) {
                   const double t = static_cast<float>(static_cast<double>(static_cast<float>(alpha * x)) + beta);
                   return std::isnan(t) ? t : std::max(0.0, std::min(1.0, t));
                 },
                 Closeness::kExact, true};
  }
  // x * f(x) at -inf is inf * 0 in the formula; the limit is -0, which the reference takes (torch gives NaN).
  const auto limit_at_minus_inf = [](std::function<double(double)> f) {
    return [f](double x) { return x == -std::numeric_limits<double>::infinity() ? -0.0 : f(x); };
  };
  if (op == "Gelu") {
    auto it = node.attributes().find("approximate");
    if (it != node.attributes().end() && it->second.s() == "tanh") {
      return Unary{limit_at_minus_inf([](double x) {
                     return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
                   }),
                   Closeness::kTranscendental};
    }
    return Unary{limit_at_minus_inf([](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }),
                 Closeness::kTranscendental};
  }
  if (table == nullptr) {
    table = new std::map<std::string, Unary>{
        {"Relu", {[](double x) { return x > 0 ? x : 0.0; }, Closeness::kExact, false}},
        {"Neg", {[](double x) { return -x; }, Closeness::kExact}},
        {"Abs", {[](double x) { return std::fabs(x); }, Closeness::kExact}},
        {"Sqrt", {[](double x) { return std::sqrt(x); }, Closeness::kExact}},
        {"Reciprocal", {[](double x) { return 1 / x; }, Closeness::kExact}},
        {"Exp", {[](double x) { return std::exp(x); }, Closeness::kTranscendental}},
        {"Log", {[](double x) { return std::log(x); }, Closeness::kTranscendental}},
        {"Erf", {[](double x) { return std::erf(x); }, Closeness::kTranscendental}},
        {"Tanh", {[](double x) { return std::tanh(x); }, Closeness::kTranscendental}},
        {"Sigmoid", {sigmoid, Closeness::kTranscendental}},
        {"Silu", {limit_at_minus_inf([sigmoid](double x) { return x * sigmoid(x); }), Closeness::kTranscendental}},
    };
  }
  auto it = table->find(op);
  if (it == table->end()) return std::nullopt;
  return it->second;
}

bool IsComparison(const std::string& op) {
  return op == "Equal" || op == "Less" || op == "LessOrEqual" || op == "Greater" || op == "GreaterOrEqual";
}

bool Compare(const std::string& op, const Element& a, const Element& b) {
  if (a.is_float || b.is_float) {
    const double x = a.f, y = b.f;  // NaN compares false, Equal too
    if (op == "Equal") return x == y;
    if (op == "Less") return x < y;
    if (op == "LessOrEqual") return x <= y;
    if (op == "Greater") return x > y;
    return x >= y;
  }
  if (op == "Equal") return a.i == b.i;
  if (op == "Less") return a.i < b.i;
  if (op == "LessOrEqual") return a.i <= b.i;
  if (op == "Greater") return a.i > b.i;
  return a.i >= b.i;
}

// Integer arithmetic as docs/ops.md states it: wrap-around; Div truncates, by 0 gives 0.
std::optional<int64_t> IntBinary(const std::string& op, int64_t x, int64_t y, DataType t) {
  const uint64_t ux = static_cast<uint64_t>(x), uy = static_cast<uint64_t>(y);
  if (op == "Add") return WrapTo(ux + uy, t);
  if (op == "Sub") return WrapTo(ux - uy, t);
  if (op == "Mul") return WrapTo(ux * uy, t);
  if (op == "Max") return std::max(x, y);
  if (op == "Min") return std::min(x, y);
  if (op == "Div") {
    if (y == 0) return 0;
    if (y == -1) return WrapTo(uint64_t{0} - ux, t);  // INT_MIN / -1 wraps to INT_MIN
    return WrapTo(static_cast<uint64_t>(x / y), t);
  }
  return std::nullopt;  // Pow on integers: not referenced here
}

std::optional<double> FloatBinary(const std::string& op, double x, double y, Closeness* closeness) {
  *closeness = Closeness::kExact;
  if (op == "Add") return x + y;
  if (op == "Sub") return x - y;
  if (op == "Mul") return x * y;
  if (op == "Div") return x / y;
  // NaN propagates (NumPy's maximum, torch.maximum).
  if (op == "Max") return std::isnan(x) || std::isnan(y) ? kNaN : std::max(x, y);
  if (op == "Min") return std::isnan(x) || std::isnan(y) ? kNaN : std::min(x, y);
  if (op == "Pow") {
    *closeness = Closeness::kTranscendental;
    return std::pow(x, y);
  }
  return std::nullopt;
}

// Cast of one element to `to`, by docs/ops.md's rules; nullopt where unchecked.
std::optional<Element> CastElement(const Element& e, DataType from, DataType to, bool saturate) {
  Element r;
  r.is_float = IsFloat(to);
  if (to == v1::BOOL) {
    r.i = e.is_float ? (e.f != 0 || std::isnan(e.f)) : e.i != 0;
    return r;
  }
  if (r.is_float) {
    if (!e.is_float && std::fabs(static_cast<double>(e.i)) >= 9007199254740992.0) return std::nullopt;  // 2^53
    r.f = StoreFloat(e.f, to, saturate);
    return r;
  }
  if (!e.is_float) {
    r.i = WrapTo(static_cast<uint64_t>(e.i), to);
    return r;
  }
  // float -> integer: truncate, saturate to the type's range, NaN gives 0.
  const double lo = to == v1::INT8 ? -128.0 : to == v1::INT32 ? -2147483648.0 : -9223372036854775808.0;
  const double hi = to == v1::INT8 ? 127.0 : to == v1::INT32 ? 2147483647.0 : 9223372036854775807.0;
  const double t = std::trunc(e.f);
  if (std::isnan(t)) {
    r.i = 0;
  } else if (t <= lo) {
    r.i = static_cast<int64_t>(lo);
  } else if (t >= hi) {
    r.i = to == v1::INT64 ? INT64_MAX : static_cast<int64_t>(hi);
  } else {
    r.i = static_cast<int64_t>(t);
  }
  (void)from;
  return r;
}

void Put(NodeReference& ref, int64_t k, const Element& e, DataType out, bool saturate) {
  if (IsFloat(out)) {
    ref.values[k] = StoreFloat(e.f, out, saturate);
  } else {
    ref.ints[k] = e.is_float ? static_cast<int64_t>(e.f) : WrapTo(static_cast<uint64_t>(e.i), out);
  }
}

int64_t IntAttr(const v1::Node& node, const std::string& name, int64_t fallback) {
  auto it = node.attributes().find(name);
  return it == node.attributes().end() ? fallback : it->second.i();
}

// ReduceSum/Mean/Max/Min of INT32, by the ONNX spec: the axes (attribute or
// constant input 1; none: all, or none with noop_with_empty_axes), exact
// integer arithmetic, the sum wrapping to int32, the mean truncated toward
// zero (NumPy's mean cast back, as ONNX's reference computes it).
std::optional<NodeReference> IntReduceReference(const v1::Node& node, const HostTensor& x, const HostTensor* axes_in,
                                                const TensorType& out) {
  const std::string& op = node.op_type();
  const Shape& in = x.type().shape;
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> axes;
  if (axes_in != nullptr) {
    for (int64_t k = 0; k < axes_in->type().elements(); ++k) axes.push_back(Load(*axes_in, k).i);
  } else if (auto it = node.attributes().find("axes"); it != node.attributes().end()) {
    axes.assign(it->second.ints().values().begin(), it->second.ints().values().end());
  }
  std::vector<bool> reduced(in.size(), axes.empty() && IntAttr(node, "noop_with_empty_axes", 0) == 0);
  for (int64_t a : axes) reduced[static_cast<size_t>(a < 0 ? a + rank : a)] = true;  // the plan checked them
  // Output element of each input element: its index with the reduced dims dropped.
  const int64_t n_out = out.elements();
  std::vector<int64_t> acc(static_cast<size_t>(n_out), op == "ReduceMax" ? INT32_MIN : op == "ReduceMin" ? INT32_MAX : 0);
  int64_t count = 1;
  for (size_t d = 0; d < in.size(); ++d) count *= reduced[d] ? in[d] : 1;
  for (int64_t k = 0; k < x.type().elements(); ++k) {
    int64_t rest = k, o = 0, stride = 1;
    for (size_t d = in.size(); d-- > 0;) {
      const int64_t index = rest % in[d];
      rest /= in[d];
      if (!reduced[d]) {
        o += index * stride;
        stride *= in[d];
      }
    }
    const int64_t v = Load(x, k).i;
    int64_t& a = acc[static_cast<size_t>(o)];
    a = op == "ReduceMax" ? std::max(a, v) : op == "ReduceMin" ? std::min(a, v) : a + v;
  }
  NodeReference ref;
  ref.values.assign(static_cast<size_t>(n_out), 0.0);
  ref.checked.assign(static_cast<size_t>(n_out), true);
  ref.ints.resize(static_cast<size_t>(n_out));
  for (int64_t o = 0; o < n_out; ++o) {
    const int64_t a = acc[static_cast<size_t>(o)];
    ref.ints[o] = op == "ReduceMean" ? (count == 0 ? 0 : a / count) : WrapTo(static_cast<uint64_t>(a), v1::INT32);
  }
  return ref;
}

}  // namespace

std::optional<NodeReference> ReferenceFor(const v1::Node& node, const std::vector<const HostTensor*>& inputs,
                                          const TensorType& out, bool saturate) {
  const std::string& op = node.op_type();
  const int64_t n = out.elements();
  NodeReference ref;
  ref.values.assign(static_cast<size_t>(n), 0.0);
  ref.ints.assign(static_cast<size_t>(n), 0);
  ref.checked.assign(static_cast<size_t>(n), true);
  auto in = [&](size_t i) -> const HostTensor* { return i < inputs.size() ? inputs[i] : nullptr; };
  if (in(0) == nullptr) return std::nullopt;
  const HostTensor& a = *in(0);

  if ((op == "ReduceSum" || op == "ReduceMean" || op == "ReduceMax" || op == "ReduceMin") &&
      a.type().dtype == v1::INT32 && out.dtype == v1::INT32) {
    return IntReduceReference(node, a, in(1), out);
  }

  if (op == "Identity" || op == "Dropout") {  // views: the input's bytes, whatever they hold
    if (a.type() != out) return std::nullopt;
    for (int64_t k = 0; k < n; ++k) {
      const Element e = Load(a, k);
      if (IsFloat(out.dtype)) {
        ref.values[k] = e.f;
      } else {
        ref.ints[k] = e.i;
      }
    }
    return ref;
  }

  if (op == "Cast") {
    if (a.type().shape != out.shape) return std::nullopt;
    for (int64_t k = 0; k < n; ++k) {
      auto e = CastElement(Load(a, k), a.type().dtype, out.dtype, saturate);
      if (!e) {
        ref.checked[k] = false;
        continue;
      }
      if (IsFloat(out.dtype)) {
        ref.values[k] = e->f;
      } else {
        ref.ints[k] = e->i;
      }
    }
    return ref;
  }

  if (auto unary = UnaryFor(node)) {
    if (!IsFloat(a.type().dtype) || a.type().shape != out.shape) return std::nullopt;
    ref.closeness = unary->closeness;
    for (int64_t k = 0; k < n; ++k) {
      const double x = Load(a, k).f;
      if (std::isnan(x) && !unary->nan_checked) ref.checked[k] = false;
      ref.values[k] = StoreFloat(unary->f(x), out.dtype, saturate);
    }
    return ref;
  }
  if (op == "Clip") {  // min/max: scalars; NaN bounds or lo > hi are not specified
    if (!IsFloat(a.type().dtype) || a.type().shape != out.shape) return std::nullopt;
    double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
    if (in(1) != nullptr) lo = Load(*in(1), 0).f;
    if (in(2) != nullptr) hi = Load(*in(2), 0).f;
    const bool defined = !std::isnan(lo) && !std::isnan(hi) && lo <= hi;
    for (int64_t k = 0; k < n; ++k) {
      const double x = Load(a, k).f;
      ref.checked[k] = defined && !std::isnan(x);
      ref.values[k] = StoreFloat(std::min(std::max(x, lo), hi), out.dtype, saturate);
    }
    return ref;
  }

  if (op == "Where") {
    if (in(1) == nullptr || in(2) == nullptr) return std::nullopt;
    for (int64_t k = 0; k < n; ++k) {
      const bool c = Load(a, BroadcastOffset(a.type().shape, out.shape, k)).i != 0;
      const HostTensor& pick = c ? *in(1) : *in(2);
      Put(ref, k, Load(pick, BroadcastOffset(pick.type().shape, out.shape, k)), out.dtype, saturate);
    }
    return ref;
  }

  const bool comparison = IsComparison(op);
  const bool arithmetic = op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Pow" || op == "Max" ||
                          op == "Min";
  if (!comparison && !arithmetic) return std::nullopt;
  if (op == "Pow" && !IsFloat(out.dtype)) return std::nullopt;  // integer Pow: not referenced here
  if (in(1) == nullptr) return std::nullopt;
  // Max and Min are variadic (a left fold over every input); the others binary.
  const size_t operands = op == "Max" || op == "Min" ? inputs.size() : 2;
  for (int64_t k = 0; k < n; ++k) {
    Element x = Load(a, BroadcastOffset(a.type().shape, out.shape, k));
    for (size_t j = 1; j < operands; ++j) {
      if (in(j) == nullptr) return std::nullopt;
      const HostTensor& b = *in(j);
      const Element y = Load(b, BroadcastOffset(b.type().shape, out.shape, k));
      if (comparison) {
        ref.ints[k] = Compare(op, x, y);
        break;
      }
      if (!x.is_float && !y.is_float) {
        auto r = IntBinary(op, x.i, y.i, out.dtype);
        if (!r) return std::nullopt;
        x.i = *r;
        ref.ints[k] = *r;
        continue;
      }
      Closeness closeness;
      // An integer exponent is converted to fp32, the op's compute type (as torch
      // promotes it), so past 2^24 it is rounded and may lose its parity.
      const double y_value = op == "Pow" && !y.is_float ? static_cast<double>(static_cast<float>(y.i)) : y.f;
      auto r = FloatBinary(op, x.f, y_value, &closeness);
      if (!r) return std::nullopt;
      ref.closeness = closeness;
      x.f = *r;  // Max/Min select an input's value: exact, so folding in double equals folding in fp32
      ref.values[k] = StoreFloat(*r, out.dtype, saturate);
    }
  }
  return ref;
}

std::string CompareToReference(const HostTensor& got, const NodeReference& ref) {
  const DataType t = got.type().dtype;
  const int64_t n = got.type().elements();
  if (n != static_cast<int64_t>(ref.checked.size())) return absl::StrCat("has ", n, " elements, the reference ", ref.checked.size());
  std::string err;
  int bad = 0;
  for (int64_t k = 0; k < n; ++k) {
    if (!ref.checked[k]) continue;
    const Element e = Load(got, k);
    bool ok;
    std::string want, have;
    if (!IsFloat(t)) {
      ok = e.i == ref.ints[k];
      want = absl::StrCat(ref.ints[k]);
      have = absl::StrCat(e.i);
    } else {
      const double r = ref.values[k], g = e.f;
      want = absl::StrCat(r);
      have = absl::StrCat(g);
      if (std::isnan(r) || std::isnan(g)) {
        ok = std::isnan(r) && std::isnan(g);
      } else if (ref.closeness == Closeness::kExact) {
        ok = g == r;  // +0 == -0
      } else {
        const double max_finite = t == v1::FLOAT16 ? kHalfMax : std::numeric_limits<float>::max();
        const double atol = t == v1::FLOAT16 ? 1e-5 : 1e-6, rtol = t == v1::FLOAT16 ? 2e-3 : 1e-5;
        // A result within rounding of the largest finite value may overflow either way.
        const bool edge = std::fabs(r) >= max_finite * (1 - 2 * rtol) || std::fabs(g) >= max_finite * (1 - 2 * rtol);
        ok = g == r || std::fabs(g - r) <= atol + rtol * std::fabs(r) ||
             (edge && std::signbit(g) == std::signbit(r) && (std::isinf(g) || std::isinf(r)));
      }
    }
    if (!ok && bad++ < 3) absl::StrAppend(&err, "element ", k, ": got ", have, ", float64 reference ", want, "; ");
  }
  if (bad > 0) absl::StrAppend(&err, bad, " of ", n, " elements off");
  return err;
}

}  // namespace npu::fuzz
