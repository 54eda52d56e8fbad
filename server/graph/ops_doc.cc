#include "server/graph/ops_doc.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/graph/op_registry.h"

namespace npu::graph {

std::string OpsMarkdownTable() {
  std::string table = "| Op | dtypes | inputs | Da Vinci units | task type |\n|---|---|---|---|---|\n";
  for (const OpDef* op : OpRegistry::Global().All()) {
    const std::string dtypes =
        absl::StrJoin(op->dtypes, ", ", [](std::string* out, DataType t) { out->append(DataTypeName(t)); });
    const std::string inputs = op->min_inputs == op->max_inputs ? absl::StrCat(op->min_inputs)
                                                                : absl::StrCat(op->min_inputs, "-", op->max_inputs);
    absl::StrAppend(&table, "| ", op->name, " | ", dtypes, " | ", inputs, " | ", op->units, " | ",
                    device::TaskTypeName(op->task_type), " |\n");
  }
  return table;
}

}  // namespace npu::graph
