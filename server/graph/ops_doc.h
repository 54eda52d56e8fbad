// The Markdown op table of docs/ops.md, generated from the op registry.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace npu::graph {

// A column a layer above the graph adds to the table (the trainer's gradient).
struct OpsTableColumn {
  std::string header;
  std::function<std::string(const std::string& op)> cell;
};

// One row per registered op (sorted by name): op, dtypes, input count, the Da
// Vinci units that run it, its task type, then each of `extra`.
std::string OpsMarkdownTable(const std::vector<OpsTableColumn>& extra = {});

}  // namespace npu::graph
