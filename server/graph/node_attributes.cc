#include "server/graph/node_attributes.h"

#include <algorithm>

#include "absl/strings/str_join.h"
#include "server/graph/bounded_text.h"
#include "server/graph/node_error.h"

namespace npu::graph {

std::string AttrKindName(AttrKind kind) {
  switch (kind) {
    case AttrKind::kInt: return "an integer (i)";
    case AttrKind::kFloat: return "a float (f)";
    case AttrKind::kString: return "a string (s)";
    case AttrKind::kInts: return "a list of integers (ints)";
    case AttrKind::kFloats: return "a list of floats (floats)";
    case AttrKind::kTensor: return "a tensor (t)";
  }
  return "?";
}

namespace {

bool HasKind(const v1::AttributeValue& v, AttrKind kind) {
  switch (kind) {
    case AttrKind::kInt: return v.value_case() == v1::AttributeValue::kI;
    case AttrKind::kFloat: return v.value_case() == v1::AttributeValue::kF || v.value_case() == v1::AttributeValue::kI;
    case AttrKind::kString: return v.value_case() == v1::AttributeValue::kS;
    case AttrKind::kInts: return v.value_case() == v1::AttributeValue::kInts;
    case AttrKind::kFloats: return v.value_case() == v1::AttributeValue::kFloats;
    case AttrKind::kTensor: return v.value_case() == v1::AttributeValue::kT;
  }
  return false;
}

}  // namespace

absl::Status NodeAttributes::CheckSchema(const std::vector<AttrDef>& schema) const {
  for (const auto& [name, value] : node_.attributes()) {
    const AttrDef* def = nullptr;
    for (const AttrDef& d : schema) {
      if (d.name == name) def = &d;
    }
    if (def == nullptr) return NodeError(node_, "unknown attribute ", Quoted(name));
    if (!HasKind(value, def->kind)) return WrongType(name, AttrKindName(def->kind));
    if (def->kind == AttrKind::kString && !def->choices.empty() &&
        std::find(def->choices.begin(), def->choices.end(), value.s()) == def->choices.end()) {
      return NodeError(node_, "attribute ", Quoted(name), " = ", Quoted(value.s()), " is not supported (",
                       absl::StrJoin(def->choices, ", "), ")");
    }
  }
  return absl::OkStatus();
}

const v1::AttributeValue* NodeAttributes::Find(absl::string_view name) const {
  auto it = node_.attributes().find(std::string(name));
  return it == node_.attributes().end() ? nullptr : &it->second;
}

bool NodeAttributes::Has(absl::string_view name) const { return Find(name) != nullptr; }

absl::Status NodeAttributes::WrongType(absl::string_view name, absl::string_view wanted) const {
  return NodeError(node_, "attribute ", Quoted(name), " must be ", wanted);
}

absl::StatusOr<int64_t> NodeAttributes::Int(absl::string_view name) const {
  const auto* v = Find(name);
  if (v == nullptr) return NodeError(node_, "missing required attribute ", Quoted(name));
  return Int(name, 0);
}

absl::StatusOr<int64_t> NodeAttributes::Int(absl::string_view name, int64_t fallback) const {
  const auto* v = Find(name);
  if (v == nullptr) return fallback;
  if (v->value_case() != v1::AttributeValue::kI) return WrongType(name, AttrKindName(AttrKind::kInt));
  return v->i();
}

absl::StatusOr<float> NodeAttributes::Float(absl::string_view name, float fallback) const {
  const auto* v = Find(name);
  if (v == nullptr) return fallback;
  if (v->value_case() == v1::AttributeValue::kF) return v->f();
  if (v->value_case() == v1::AttributeValue::kI) return static_cast<float>(v->i());
  return WrongType(name, AttrKindName(AttrKind::kFloat));
}

absl::StatusOr<std::string> NodeAttributes::String(absl::string_view name, std::string fallback) const {
  const auto* v = Find(name);
  if (v == nullptr) return fallback;
  if (v->value_case() != v1::AttributeValue::kS) return WrongType(name, AttrKindName(AttrKind::kString));
  return v->s();
}

absl::StatusOr<std::vector<int64_t>> NodeAttributes::Ints(absl::string_view name,
                                                          std::vector<int64_t> fallback) const {
  const auto* v = Find(name);
  if (v == nullptr) return fallback;
  if (v->value_case() != v1::AttributeValue::kInts) return WrongType(name, AttrKindName(AttrKind::kInts));
  return std::vector<int64_t>(v->ints().values().begin(), v->ints().values().end());
}

}  // namespace npu::graph
