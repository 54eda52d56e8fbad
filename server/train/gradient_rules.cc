#include "server/train/gradient_rules.h"

#include <cctype>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "kernels/fp16.h"

namespace npu::train {

absl::StatusOr<const v1::Tensor*> GradContext::ConstantInput(int input) const {
  const std::string& name = node.inputs(input);
  auto it = constants_.find(name);
  if (it == constants_.end()) {
    return absl::FailedPreconditionError(absl::StrCat("node \"", node.name(), "\" (", node.op_type(), "): input \"",
                                                      name, "\" must be a constant to differentiate the node"));
  }
  return it->second;
}

absl::StatusOr<std::vector<int64_t>> GradContext::ConstantInts(int input) const {
  auto t = ConstantInput(input);
  if (!t.ok()) return t.status();
  const std::string& d = (*t)->data();
  std::vector<int64_t> v;
  if ((*t)->dtype() == v1::INT64) {
    v.resize(d.size() / 8);
    std::memcpy(v.data(), d.data(), v.size() * 8);
  } else if ((*t)->dtype() == v1::INT32) {
    std::vector<int32_t> w(d.size() / 4);
    std::memcpy(w.data(), d.data(), w.size() * 4);
    v.assign(w.begin(), w.end());
  } else {
    return Unsupported(absl::StrCat("with input \"", node.inputs(input), "\" not INT64/INT32"));
  }
  return v;
}

absl::StatusOr<std::vector<float>> GradContext::ConstantFloats(int input) const {
  auto t = ConstantInput(input);
  if (!t.ok()) return t.status();
  if ((*t)->dtype() != v1::FLOAT32) return Unsupported(absl::StrCat("with input \"", node.inputs(input), "\" not FLOAT32"));
  std::vector<float> v((*t)->data().size() / sizeof(float));
  std::memcpy(v.data(), (*t)->data().data(), v.size() * sizeof(float));
  return v;
}

absl::StatusOr<float> GradContext::ConstantScalar(int input) const {
  auto t = ConstantInput(input);
  if (!t.ok()) return t.status();
  const std::string& d = (*t)->data();
  if ((*t)->dtype() == v1::FLOAT32 && d.size() == 4) {
    float v;
    std::memcpy(&v, d.data(), 4);
    return v;
  }
  if ((*t)->dtype() == v1::FLOAT16 && d.size() == 2) {
    kernels::half_bits h;
    std::memcpy(&h, d.data(), 2);
    return kernels::HalfToFloat(h);
  }
  if ((*t)->dtype() == v1::INT64 && d.size() == 8) {
    int64_t v;
    std::memcpy(&v, d.data(), 8);
    return static_cast<float>(v);
  }
  if ((*t)->dtype() == v1::INT32 && d.size() == 4) {
    int32_t v;
    std::memcpy(&v, d.data(), 4);
    return static_cast<float>(v);
  }
  return Unsupported(absl::StrCat("with input \"", node.inputs(input), "\" not one number"));
}

absl::Status GradContext::Unsupported(const std::string& what) const {
  return absl::FailedPreconditionError(
      absl::StrCat("node \"", node.name(), "\" (", node.op_type(), "): cannot differentiate ", what));
}

std::string GradContext::Reshape(const std::string& v, const graph::Shape& from, const graph::Shape& to) {
  if (from == to) return v;
  const std::string s = g.IntsConstant(Base() + "/shape", to);
  return g.Add1("Reshape", {v, s}, {}, Base() + "/reshape");
}

std::string GradContext::Unbroadcast(const std::string& dy, const graph::Shape& from, const graph::Shape& shape) {
  if (from == shape) return dy;
  const size_t lead = from.size() - shape.size();
  std::vector<int64_t> axes;
  for (size_t d = 0; d < from.size(); ++d) {
    if (d < lead || (shape[d - lead] == 1 && from[d] != 1)) axes.push_back(static_cast<int64_t>(d));
  }
  std::string reduced = dy;
  graph::Shape kept = from;
  if (!axes.empty()) {
    const std::string a = g.IntsConstant(Base() + "/axes", axes);
    reduced = g.Add1("ReduceSum", {dy, a}, {{"keepdims", AttrInt(1)}}, Base() + "/unbroadcast");
    for (int64_t d : axes) kept[d] = 1;
  }
  return Reshape(reduced, kept, shape);
}

std::string GradContext::Scale(const std::string& v, float scalar, graph::DataType dtype) {
  if (scalar == 1.0f) return v;
  const std::string c = g.ScalarConstant(Base() + "/scale", scalar, dtype);
  return g.Add1("Mul", {v, c}, {}, Base() + "/scaled");
}

std::string GradContext::Op(const std::string& op, const std::vector<std::string>& inputs, const Attributes& attrs) {
  std::string name = op;
  for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return g.Add1(op, inputs, attrs, Base() + "/" + name);
}

std::string GradContext::Scalar(float value, graph::DataType dtype) {
  return g.ScalarConstant(Base() + "/const", value, dtype);
}

std::string GradContext::Masked(const std::string& cond, const std::string& v, graph::DataType dtype) {
  return Op("Where", {cond, v, Scalar(0.0f, dtype)});
}

std::string GradContext::Zeros(const graph::TensorType& type) {
  v1::Tensor zeros;
  zeros.set_dtype(type.dtype);
  for (int64_t d : type.shape) zeros.add_shape(d);
  zeros.mutable_data()->assign(type.bytes(), '\0');
  return g.Constant(Base() + "/zeros", std::move(zeros));
}

std::string GradContext::Int64Tensor(const graph::Shape& shape, const std::vector<int64_t>& values) {
  v1::Tensor t;
  t.set_dtype(v1::INT64);
  for (int64_t d : shape) t.add_shape(d);
  t.set_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(int64_t)));
  return g.Constant(Base() + "/indices", std::move(t));
}

std::string GradContext::FloatTensor(const graph::Shape& shape, const std::vector<float>& values) {
  v1::Tensor t;
  t.set_dtype(v1::FLOAT32);
  for (int64_t d : shape) t.add_shape(d);
  t.set_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
  return g.Constant(Base() + "/floats", std::move(t));
}

std::string GradContext::CastTo(const std::string& v, graph::DataType from, graph::DataType to) {
  return from == to ? v : Op("Cast", {v}, {{"to", AttrInt(OnnxFloatCode(to))}});
}

std::vector<int64_t> GradContext::IntsAttr(const std::string& name, std::vector<int64_t> fallback) const {
  auto it = node.attributes().find(name);
  if (it == node.attributes().end()) return fallback;
  return {it->second.ints().values().begin(), it->second.ints().values().end()};
}

int64_t GradContext::IntAttr(const std::string& name, int64_t fallback) const {
  auto it = node.attributes().find(name);
  return it == node.attributes().end() ? fallback : it->second.i();
}

float GradContext::FloatAttr(const std::string& name, float fallback) const {
  auto it = node.attributes().find(name);
  if (it == node.attributes().end()) return fallback;
  return it->second.value_case() == v1::AttributeValue::kF ? it->second.f() : static_cast<float>(it->second.i());
}

namespace {

const std::map<std::string, GradRule>& Rules() {
  static const auto* rules = [] {
    auto* r = new std::map<std::string, GradRule>();
    AddMathGradRules(*r);
    AddNnGradRules(*r);
    AddShapeGradRules(*r);
    AddActivationGradRules(*r);
    AddReduceGradRules(*r);
    AddIndexGradRules(*r);
    AddResizeGradRules(*r);
    for (const std::string& op : FlatOps()) (*r)[op] = [](GradContext&) { return absl::OkStatus(); };
    return r;
  }();
  return *rules;
}

}  // namespace

const std::set<std::string>& FlatOps() {
  static const auto* flat = new std::set<std::string>{"Ceil", "Floor", "Round", "Sign"};
  return *flat;
}

const std::set<std::string>& OpsTakingAnyOutputGradient() {
  static const auto* ops = new std::set<std::string>{"GRU", "LSTM", "Split"};
  return *ops;
}

const GradRule* FindGradRule(const std::string& op_type) {
  auto it = Rules().find(op_type);
  return it == Rules().end() ? nullptr : &it->second;
}

std::vector<std::string> OpsWithGradientRules() {
  std::vector<std::string> ops;
  for (const auto& [op, rule] : Rules()) ops.push_back(op);
  return ops;
}

}  // namespace npu::train
