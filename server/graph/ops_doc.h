// The Markdown op table of docs/ops.md, generated from the op registry.
#pragma once

#include <string>

namespace npu::graph {

// One row per registered op (sorted by name): op, dtypes, input count, the Da
// Vinci units that run it, and its task type.
std::string OpsMarkdownTable();

}  // namespace npu::graph
