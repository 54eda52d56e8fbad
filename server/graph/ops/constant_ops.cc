// Constant, Shape and Size: values known at plan time. Constant's tensor comes from
// its attribute and becomes a constant of the plan, like an initializer (the
// node never runs); Shape writes its input's dims, Size its element count (INT64). None reads tensor
// bytes, so none does device work beyond writing a few bytes.
#include <memory>
#include <vector>

#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/shape_args.h"

namespace npu::graph::ops {
namespace {

// The Constant's value as a tensor message (value_* attributes are folded in).
absl::StatusOr<v1::Tensor> ConstantValue(const v1::Node& node) {
  if (node.attributes_size() != 1) {
    return NodeError(node, "needs exactly one of the attributes value, value_float, value_floats, value_int, "
                           "value_ints");
  }
  const auto& [name, a] = *node.attributes().begin();
  v1::Tensor t;
  if (name == "value" && a.has_t()) {
    t = a.t();
  } else if (name == "value_float" && a.value_case() == v1::AttributeValue::kF) {
    t.set_dtype(v1::FLOAT32);
    const float f = a.f();
    t.set_data(&f, sizeof f);
  } else if (name == "value_int" && a.value_case() == v1::AttributeValue::kI) {
    t.set_dtype(v1::INT64);
    const int64_t i = a.i();
    t.set_data(&i, sizeof i);
  } else if (name == "value_floats" && a.has_floats()) {
    t.set_dtype(v1::FLOAT32);
    t.add_shape(a.floats().values_size());
    t.set_data(a.floats().values().data(), sizeof(float) * a.floats().values_size());
  } else if (name == "value_ints" && a.has_ints()) {
    t.set_dtype(v1::INT64);
    t.add_shape(a.ints().values_size());
    t.set_data(a.ints().values().data(), sizeof(int64_t) * a.ints().values_size());
  } else {
    return NodeError(node, "attribute ", Quoted(name), " is not supported (or has the wrong type)");
  }
  return t;
}

absl::StatusOr<std::vector<TensorType>> InferConstant(InferContext& c) {
  auto t = ConstantValue(c.node);
  if (!t.ok()) return t.status();
  auto type = ValidateType(t->dtype(), t->shape(), NodeLabel(c.node) + " value");
  if (!type.ok()) return type.status();
  if (type->bytes() != t->data().size()) {
    return NodeError(c.node, "value ", ToString(*type), " needs ", type->bytes(), " bytes, got ", t->data().size());
  }
  if (auto s = CheckBoolBytes(*type, t->data().data(), NodeLabel(c.node) + " value"); !s.ok()) return s;
  // The value itself is the prepared state: the planner makes the output a
  // constant (OpDef::folds_to_constant), so no run executes this node.
  auto owner = std::make_shared<const v1::Tensor>(*std::move(t));
  c.Prepare(HostTensor(*type, owner, reinterpret_cast<const std::byte*>(owner->data().data())));
  return std::vector<TensorType>{*type};
}

absl::StatusOr<std::vector<TensorType>> InferShape(InferContext& c) {
  const int64_t rank = static_cast<int64_t>(c.inputs[0]->shape.size());
  auto start = c.attrs.Int("start", 0);
  auto end = c.attrs.Int("end", rank);
  if (!start.ok()) return start.status();
  if (!end.ok()) return end.status();
  auto clampdim = [rank](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
  const int64_t n = std::max<int64_t>(0, clampdim(*end) - clampdim(*start));
  return std::vector<TensorType>{{v1::INT64, {n}}};
}

absl::Status RunShape(RunContext& ctx) {
  const Shape& s = ctx.inputs[0]->type().shape;
  const int64_t rank = static_cast<int64_t>(s.size());
  int64_t start = ctx.attrs.Int("start", 0).value_or(0);
  start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
  const HostTensor& out = ctx.outputs[0];
  for (int64_t i = 0; i < out.type().elements(); ++i) out.mutable_as<int64_t>()[i] = s[start + i];
  return absl::OkStatus();
}

// Size: the input's element count, an INT64 scalar.
absl::StatusOr<std::vector<TensorType>> InferSize(InferContext&) { return std::vector<TensorType>{{v1::INT64, {}}}; }

absl::Status RunSize(RunContext& ctx) {
  ctx.outputs[0].mutable_as<int64_t>()[0] = ctx.inputs[0]->type().elements();
  return absl::OkStatus();
}

}  // namespace

void RegisterConstantOps(OpRegistry& r) {
  OpDef c;
  c.name = "Constant";
  c.units = "none (plan-time value)";
  c.dtypes = {v1::FLOAT16, v1::FLOAT32, v1::INT32, v1::INT8, v1::BOOL, v1::INT64};
  c.min_inputs = c.max_inputs = 0;
  c.attributes = {{"value", AttrKind::kTensor},      {"value_float", AttrKind::kFloat},
                  {"value_floats", AttrKind::kFloats}, {"value_int", AttrKind::kInt},
                  {"value_ints", AttrKind::kInts}};
  c.infer = InferConstant;
  c.folds_to_constant = true;
  r.Register(std::move(c));
  OpDef s;
  s.name = "Shape";
  s.units = "Scalar";
  s.dtypes = {v1::FLOAT16, v1::FLOAT32, v1::INT32, v1::INT8, v1::BOOL, v1::INT64};
  s.attributes = {{"start", AttrKind::kInt}, {"end", AttrKind::kInt}};
  s.reads_types_only = true;
  s.infer = InferShape;
  s.run = RunShape;
  r.Register(std::move(s));
  OpDef size;
  size.name = "Size";
  size.units = "Scalar";
  size.dtypes = {v1::FLOAT16, v1::FLOAT32, v1::INT32, v1::INT8, v1::BOOL, v1::INT64};
  size.reads_types_only = true;
  size.infer = InferSize;
  size.run = RunSize;
  r.Register(std::move(size));
}

}  // namespace npu::graph::ops
