// Errors that name the node at fault: `node "fc1" (MatMul): ...`. Names are
// quoted with Quoted (bounded_text.h), so a huge client-chosen name cannot
// blow up a status message.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "npu/v1/graph.pb.h"
#include "server/graph/bounded_text.h"

namespace npu::graph {

inline std::string NodeLabel(const v1::Node& node) {
  return absl::StrCat("node ", Quoted(node.name()), " (", node.op_type().size() <= kMaxQuotedName
                                                               ? std::string(node.op_type())
                                                               : Quoted(node.op_type()),
                      ")");
}

// `input "x"`: the node's input i by its value name.
inline std::string InputLabel(const v1::Node& node, int i) {
  return absl::StrCat("input ", Quoted(i < node.inputs_size() ? node.inputs(i) : std::string()));
}

template <typename... Args>
absl::Status NodeError(const v1::Node& node, const Args&... args) {
  return absl::InvalidArgumentError(absl::StrCat(NodeLabel(node), ": ", args...));
}

// `status` (from shape_math.h, broadcast.h, ...) with the node's label in
// front; its code is kept.
inline absl::Status AtNode(const v1::Node& node, const absl::Status& status) {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat(NodeLabel(node), ": ", status.message()));
}

}  // namespace npu::graph
