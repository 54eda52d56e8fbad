#include "server/train/gradient_docs.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/train/gradient_rules.h"

namespace npu::train {

graph::OpsTableColumn GradientColumn() {
  return {"gradient", [](const std::string& op) -> std::string {
            if (FlatOps().contains(op)) return "zero";
            return FindGradRule(op) != nullptr ? "yes" : "-";
          }};
}

std::string GradientOpsMarkdown() {
  std::vector<std::string> ops, flat;
  for (const std::string& op : OpsWithGradientRules()) (FlatOps().contains(op) ? flat : ops).push_back(op);
  return absl::StrCat("Ops with a gradient (", ops.size(), "): ", absl::StrJoin(ops, ", "),
                      ".\nOps whose gradient is zero (as torch's): ", absl::StrJoin(flat, ", "), ".\n");
}

}  // namespace npu::train
