// Errors that name the node at fault: `node "fc1" (MatMul): ...`.
#pragma once

#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "npu/v1/graph.pb.h"

namespace npu::graph {

inline std::string NodeLabel(const v1::Node& node) {
  return absl::StrCat("node \"", node.name(), "\" (", node.op_type(), ")");
}

template <typename... Args>
absl::Status NodeError(const v1::Node& node, const Args&... args) {
  return absl::InvalidArgumentError(absl::StrCat(NodeLabel(node), ": ", args...));
}

}  // namespace npu::graph
