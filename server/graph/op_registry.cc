#include "server/graph/op_registry.h"

#include <algorithm>

#include "server/graph/ops/builtin_ops.h"

namespace npu::graph {

bool WritesNothing(const OpDef& op, const std::vector<HostTensor>& outputs) {
  if (outputs.empty() || op.task_type == device::TaskType::kHccl) return false;
  for (const HostTensor& out : outputs) {
    if (out.type().elements() != 0) return false;
  }
  return true;
}

OpRegistry& OpRegistry::Global() {
  static OpRegistry* registry = [] {
    auto* r = new OpRegistry();
    ops::RegisterBuiltinOps(*r);
    return r;
  }();
  return *registry;
}

void OpRegistry::Register(OpDef def) { ops_.push_back(std::move(def)); }

const OpDef* OpRegistry::Find(absl::string_view name) const {
  for (const auto& op : ops_) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

std::vector<const OpDef*> OpRegistry::All() const {
  std::vector<const OpDef*> all;
  for (const auto& op : ops_) all.push_back(&op);
  std::sort(all.begin(), all.end(), [](const OpDef* a, const OpDef* b) { return a->name < b->name; });
  return all;
}

}  // namespace npu::graph
