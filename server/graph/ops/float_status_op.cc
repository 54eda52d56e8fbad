// NPUGetFloatStatus(values...) -> status: the device's float-status flag as a
// tensor (FLOAT32 scalar, 0 when clear): how many results the run's earlier
// nodes overflowed (fp16 saturated to +-65504, or made inf/NaN; see
// TileWork::overflow_elements). Its inputs are not read: they order it after
// the nodes whose status it reports (a training step gives it every gradient).
// Each run starts with the flag clear, the NPUClearFloatStatus that apex for
// Ascend issues before the backward pass. Scalar unit only.
#include <algorithm>
#include <vector>

#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/training_op_def.h"

namespace npu::graph::ops {
namespace {

absl::StatusOr<std::vector<TensorType>> InferFloatStatus(InferContext& /*c*/) {
  return std::vector<TensorType>{{v1::FLOAT32, {}}};
}

absl::Status RunFloatStatus(RunContext& ctx) {
  ctx.outputs[0].mutable_as<float>()[0] = static_cast<float>(std::min<uint64_t>(ctx.float_status, 1u << 24));
  ctx.work.tiles.assign(1, device::TileWork{});
  ctx.work.tiles[0].scalar_instructions = 4;  // read the status register, store it
  ctx.work.tiles[0].mte3_bytes = 4;
  return absl::OkStatus();
}

}  // namespace

void RegisterFloatStatusOp(OpRegistry& r) {
  OpDef d = TrainingOpDef("NPUGetFloatStatus", 1, 65536, 1, InferFloatStatus, RunFloatStatus, "Scalar");
  d.dtypes = {v1::FLOAT16, v1::FLOAT32, v1::INT32, v1::INT8, v1::BOOL, v1::INT64};
  d.variadic = true;  // the values it is ordered after: every input is one, none may be empty
  r.Register(std::move(d));
}

}  // namespace npu::graph::ops
