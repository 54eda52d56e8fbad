// Logical ops on BOOL tensors (ONNX): Not, and And, Or, Xor with NumPy
// broadcasting. Masks move as bytes and combine in the Vector unit's integer
// lanes, one pass per element, exactly.
#include <vector>

#include "server/device/vector_passes.h"
#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/shape_args.h"
#include "server/graph/ops/vector_chunks.h"

namespace npu::graph::ops {
namespace {

enum class LogicOp { kNot, kAnd, kOr, kXor };

absl::StatusOr<std::vector<TensorType>> InferLogic(InferContext& c) {
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (c.inputs[i]->dtype != v1::BOOL) {
      return NodeError(c.node, InputLabel(c.node, static_cast<int>(i)), ": dtype ", DataTypeName(c.inputs[i]->dtype),
                       " is not supported (BOOL)");
    }
  }
  auto shape = BroadcastInputs(c, 0, static_cast<int>(c.inputs.size()));
  if (!shape.ok()) return shape.status();
  return std::vector<TensorType>{{v1::BOOL, *shape}};
}

absl::Status RunLogic(RunContext& ctx, LogicOp op) {
  const HostTensor& out = ctx.outputs[0];
  const Shape& os = out.type().shape;
  const HostTensor& a = *ctx.inputs[0];
  const HostTensor* b = ctx.inputs.size() > 1 ? ctx.inputs[1] : nullptr;
  const BroadcastMap ma(a.type().shape, os);
  const BroadcastMap mb(b != nullptr ? b->type().shape : os, os);
  const int64_t operands = b != nullptr ? 3 : 2;
  ForEachChunk(ctx, operands, device::VectorPasses(device::VectorKernel::kLogic), [&](int64_t s, int64_t len) {
    thread_local std::vector<int32_t> xa, xb;
    xa.resize(static_cast<size_t>(len));
    GatherBroadcast(a, ma, s, len, xa.data());
    if (b != nullptr) {
      xb.resize(static_cast<size_t>(len));
      GatherBroadcast(*b, mb, s, len, xb.data());
    }
    for (int64_t i = 0; i < len; ++i) {
      switch (op) {
        case LogicOp::kNot: xa[i] = xa[i] == 0; break;
        case LogicOp::kAnd: xa[i] = xa[i] & xb[i]; break;
        case LogicOp::kOr: xa[i] = xa[i] | xb[i]; break;
        case LogicOp::kXor: xa[i] = xa[i] ^ xb[i]; break;
      }
    }
    StoreFromInt32(out, s, len, xa.data());
  });
  return absl::OkStatus();
}

OpDef LogicDef(std::string name, LogicOp op) {
  OpDef d;
  d.name = std::move(name);
  d.units = "Vector, MTE2, MTE3";
  d.task_type = device::TaskType::kAiVectorCore;
  d.dtypes = {v1::BOOL};
  d.min_inputs = d.max_inputs = op == LogicOp::kNot ? 1 : 2;
  d.infer = InferLogic;
  d.run = [op](RunContext& c) { return RunLogic(c, op); };
  return d;
}

}  // namespace

void RegisterLogicOps(OpRegistry& r) {
  r.Register(LogicDef("Not", LogicOp::kNot));
  r.Register(LogicDef("And", LogicOp::kAnd));
  r.Register(LogicDef("Or", LogicOp::kOr));
  r.Register(LogicDef("Xor", LogicOp::kXor));
}

}  // namespace npu::graph::ops
