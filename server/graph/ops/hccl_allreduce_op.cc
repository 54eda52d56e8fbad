// HcclAllReduce(x_1, ..., x_k) -> (y_1, ..., y_k): each input summed over the
// devices of the run's collective group (ExecOptions::collective) by HCCL's
// ring allreduce (server/device/collective_group.h), every device receiving
// the same bits; DDP's gradient bucket is one node. A communication task
// (msprof's Task Type HCCL): its window is the group's, on the links, no AI
// core busy. Outside a group (one device) the outputs copy the inputs in no
// time.
#include <cstring>
#include <utility>
#include <vector>

#include "server/device/collective_group.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/training_op_def.h"

namespace npu::graph::ops {
namespace {

absl::StatusOr<std::vector<TensorType>> InferAllReduce(InferContext& c) {
  if (auto s = CheckFloatInputs(c); !s.ok()) return s;
  if (c.node.outputs_size() != c.node.inputs_size()) {
    return NodeError(c.node, "needs one output per input (", c.node.inputs_size(), "), has ", c.node.outputs_size());
  }
  std::vector<TensorType> types;
  for (const TensorType* t : c.inputs) types.push_back(*t);
  return types;
}

absl::Status RunAllReduce(RunContext& ctx) {
  ctx.work.task_type = device::TaskType::kHccl;
  std::vector<device::CollectiveGroup::Buffer> buffers;
  uint64_t bytes = 0;
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    const HostTensor& in = *ctx.inputs[i];
    bytes += in.bytes();
    buffers.push_back({in.data(), ctx.outputs[i].mutable_data(),
                       in.type().dtype == v1::FLOAT16 ? kernels::ElemType::kFloat16 : kernels::ElemType::kFloat32,
                       in.type().elements()});
  }
  if (ctx.collective == nullptr || ctx.collective->size() == 1) {
    for (size_t i = 0; i < ctx.inputs.size(); ++i) std::memcpy(buffers[i].out, buffers[i].in, ctx.inputs[i]->bytes());
    ctx.work.comm = {ctx.ready_cycle, ctx.ready_cycle, bytes, 0};
    return absl::OkStatus();
  }
  auto window = ctx.collective->AllReduce(ctx.node.name(), ctx.rank, std::move(buffers), ctx.ready_cycle);
  if (!window.ok()) return window.status();
  ctx.work.comm = {window->start, window->end, window->bytes, window->overflow_elements};
  return absl::OkStatus();
}

}  // namespace

void RegisterHcclAllReduceOp(OpRegistry& r) {
  OpDef d = TrainingOpDef("HcclAllReduce", 1, 65536, 65536, InferAllReduce, RunAllReduce, "HCCS links (HCCL)",
                          device::TaskType::kHccl);
  d.variadic = true;  // a bucket of gradients: every input is one, none may be empty
  r.Register(std::move(d));
}

}  // namespace npu::graph::ops
