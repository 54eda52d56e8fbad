#include "server/graph/ops_doc.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/graph/op_registry.h"

namespace npu::graph {

namespace {

std::string AttributeList(const std::vector<AttrDef>& attrs) {
  return absl::StrJoin(attrs, ", ", [](std::string* out, const AttrDef& a) {
    static constexpr const char* kShort[] = {"i", "f", "s", "ints", "floats", "t"};
    absl::StrAppend(out, a.name, " (", kShort[static_cast<int>(a.kind)]);
    if (!a.choices.empty()) absl::StrAppend(out, ": ", absl::StrJoin(a.choices, "/"));
    out->append(")");
  });
}

}  // namespace

std::string OpsMarkdownTable(const std::vector<OpsTableColumn>& extra) {
  std::string table = "| Op | dtypes | inputs | attributes | Da Vinci units | task type |";
  for (const OpsTableColumn& c : extra) absl::StrAppend(&table, " ", c.header, " |");
  table += "\n|---|---|---|---|---|---|";
  for (size_t i = 0; i < extra.size(); ++i) table += "---|";
  table += "\n";
  for (const OpDef* op : OpRegistry::Global().All()) {
    const std::string dtypes =
        absl::StrJoin(op->dtypes, ", ", [](std::string* out, DataType t) { out->append(DataTypeName(t)); });
    std::string inputs = op->min_inputs == op->max_inputs ? absl::StrCat(op->min_inputs)
                                                          : absl::StrCat(op->min_inputs, "-", op->max_inputs);
    if (!op->shape_inputs.empty()) absl::StrAppend(&inputs, " (constant: ", absl::StrJoin(op->shape_inputs, ", "), ")");
    const std::string attributes = op->attributes.empty() ? "-" : AttributeList(op->attributes);
    absl::StrAppend(&table, "| ", op->name, " | ", dtypes, " | ", inputs, " | ", attributes, " | ", op->units, " | ",
                    device::TaskTypeName(op->task_type), " |");
    for (const OpsTableColumn& c : extra) absl::StrAppend(&table, " ", c.cell(op->name), " |");
    table += "\n";
  }
  return table;
}

}  // namespace npu::graph
