#include "server/graph/node_infer.h"

#include "absl/strings/str_cat.h"
#include "server/graph/guarded_call.h"
#include "server/graph/node_error.h"
#include "server/graph/shape_math.h"

namespace npu::graph {

absl::Status CheckArity(const v1::Node& node, const OpDef& op) {
  if (node.inputs_size() < op.min_inputs || node.inputs_size() > op.max_inputs) {
    return NodeError(node, "takes ", op.min_inputs == op.max_inputs ? "" : "from ", op.min_inputs,
                     op.min_inputs == op.max_inputs ? "" : absl::StrCat(" to ", op.max_inputs),
                     " inputs, got ", node.inputs_size());
  }
  if (node.outputs_size() < 1 || node.outputs_size() > op.num_outputs) {
    return NodeError(node, "defines ", node.outputs_size(), " outputs; ", op.name, " has ", op.num_outputs);
  }
  return absl::OkStatus();
}

absl::StatusOr<NodeInference> InferNode(const v1::Node& node, const OpDef& op,
                                        std::vector<const TensorType*> inputs,
                                        std::vector<const HostTensor*> constants,
                                        const device::DevicePreset& preset, uint64_t max_tensor_bytes,
                                        const FusedEpilogue* epilogue) {
  for (int j = 0; j < static_cast<int>(inputs.size()); ++j) {
    if (inputs[j] == nullptr && (j < op.min_inputs || op.variadic)) {
      return NodeError(node, "required input ", j, " is empty");
    }
  }
  InferContext ctx{node, std::move(inputs), std::move(constants), NodeAttributes(node), &preset, max_tensor_bytes,
                   nullptr};
  ctx.epilogue = epilogue;
  if (auto s = ctx.attrs.CheckSchema(op.attributes); !s.ok()) return s;
  absl::StatusOr<std::vector<TensorType>> types = absl::InternalError("not inferred");
  if (auto s = GuardedCall(node, "planning", [&] {
        types = op.infer(ctx);
        return types.status();
      });
      !s.ok()) {
    return s;
  }
  if (types->size() < static_cast<size_t>(node.outputs_size())) {
    return absl::InternalError(absl::StrCat(NodeLabel(node), ": inferred ", types->size(), " output types for ",
                                            node.outputs_size(), " outputs"));
  }
  types->resize(static_cast<size_t>(node.outputs_size()));
  for (int j = 0; j < node.outputs_size(); ++j) {
    const TensorType& t = (*types)[j];
    const std::string what = absl::StrCat(NodeLabel(node), " output ", Quoted(node.outputs(j)));
    if (t.shape.size() > kMaxRank) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": rank ", t.shape.size(), " exceeds the maximum of ",
                                                     kMaxRank));
    }
    if (auto s = CheckedBytes(t, max_tensor_bytes, what).status(); !s.ok()) return s;
  }
  return NodeInference{*std::move(types), std::move(ctx.state)};
}

}  // namespace npu::graph
