// Typed, checked access to a node's ONNX-style attributes. Every error names
// the node and the attribute.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"
#include "npu/v1/graph.pb.h"

namespace npu::graph {

class NodeAttributes {
 public:
  explicit NodeAttributes(const v1::Node& node) : node_(node) {}

  // INVALID_ARGUMENT naming the first attribute not in `known`.
  absl::Status CheckKnown(std::initializer_list<absl::string_view> known) const;

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
