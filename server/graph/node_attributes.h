// Typed, checked access to a node's ONNX-style attributes. Every error names
// the node and the attribute.
#pragma once

#include <cstdint>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"
#include "npu/v1/graph.pb.h"

namespace npu::graph {

// An op's attribute schema (OpDef::attributes): the planner refuses any
// attribute an op does not declare, or one of another kind, before the op's
// inference runs; docs/ops.md lists them and the fuzzer generates them.
enum class AttrKind { kInt, kFloat, kString, kInts, kFloats, kTensor };

struct AttrDef {
  AttrDef(std::string name, AttrKind kind, std::vector<std::string> choices = {})
      : name(std::move(name)), kind(kind), choices(std::move(choices)) {}
  std::string name;
  AttrKind kind;
  std::vector<std::string> choices;  // kString: the values the op accepts; empty: any
};

// "an integer (i)", "a list of integers (ints)", ...
std::string AttrKindName(AttrKind kind);

class NodeAttributes {
 public:
  explicit NodeAttributes(const v1::Node& node) : node_(node) {}

  // INVALID_ARGUMENT naming the first attribute `schema` does not declare, or
  // that has another kind (an integer serves where a float is declared, as
  // Float reads it).
  absl::Status CheckSchema(const std::vector<AttrDef>& schema) const;

  bool Has(absl::string_view name) const;
  absl::StatusOr<int64_t> Int(absl::string_view name) const;  // required
  absl::StatusOr<int64_t> Int(absl::string_view name, int64_t fallback) const;
  absl::StatusOr<float> Float(absl::string_view name, float fallback) const;
  absl::StatusOr<std::string> String(absl::string_view name, std::string fallback) const;
  absl::StatusOr<std::vector<int64_t>> Ints(absl::string_view name, std::vector<int64_t> fallback) const;

 private:
  const v1::AttributeValue* Find(absl::string_view name) const;
  absl::Status WrongType(absl::string_view name, absl::string_view wanted) const;

  const v1::Node& node_;
};

}  // namespace npu::graph
