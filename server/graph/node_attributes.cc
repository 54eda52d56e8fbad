#include "server/graph/node_attributes.h"

#include "server/graph/bounded_text.h"
#include "server/graph/node_error.h"

namespace npu::graph {

absl::Status NodeAttributes::CheckKnown(std::initializer_list<absl::string_view> known) const {
  for (const auto& [name, value] : node_.attributes()) {
    bool found = false;
    for (absl::string_view k : known) found = found || k == name;
    if (!found) return NodeError(node_, "unknown attribute ", Quoted(name));
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
  if (v->value_case() != v1::AttributeValue::kI) return WrongType(name, "an integer (i)");
  return v->i();
}

absl::StatusOr<float> NodeAttributes::Float(absl::string_view name, float fallback) const {
  const auto* v = Find(name);
  if (v == nullptr) return fallback;
  if (v->value_case() == v1::AttributeValue::kF) return v->f();
  if (v->value_case() == v1::AttributeValue::kI) return static_cast<float>(v->i());
  return WrongType(name, "a float (f)");
}

absl::StatusOr<std::string> NodeAttributes::String(absl::string_view name, std::string fallback) const {
  const auto* v = Find(name);
  if (v == nullptr) return fallback;
  if (v->value_case() != v1::AttributeValue::kS) return WrongType(name, "a string (s)");
  return v->s();
}

absl::StatusOr<std::vector<int64_t>> NodeAttributes::Ints(absl::string_view name,
                                                          std::vector<int64_t> fallback) const {
  const auto* v = Find(name);
  if (v == nullptr) return fallback;
  if (v->value_case() != v1::AttributeValue::kInts) return WrongType(name, "a list of integers (ints)");
  return std::vector<int64_t>(v->ints().values().begin(), v->ints().values().end());
}

}  // namespace npu::graph
