// Comparisons with NumPy broadcasting, producing BOOL: Equal, Less,
// LessOrEqual, Greater, GreaterOrEqual (ONNX). Float inputs compare in fp32
// (fp16 widens exactly), integer and BOOL inputs in int64: exact either way.
// The Vector compare per chunk writes the BOOL bytes; int64 operands take two
// 32-bit compare steps (the Vector unit's integer ALU is 32 bits wide).
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "kernels/integer_math.h"
#include "server/device/vector_passes.h"
#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/shape_args.h"
#include "server/graph/ops/vector_chunks.h"

namespace npu::graph::ops {
namespace {

using kernels::CompareOp;

const std::vector<DataType> kOrderedTypes = {v1::FLOAT16, v1::FLOAT32, v1::INT32, v1::INT8, v1::INT64};
const std::vector<DataType> kEqualTypes = {v1::FLOAT16, v1::FLOAT32, v1::INT32, v1::INT8, v1::INT64, v1::BOOL};

absl::StatusOr<std::vector<TensorType>> InferCompare(InferContext& c, const std::vector<DataType>& accepted) {
  const TensorType& a = *c.inputs[0];
  const TensorType& b = *c.inputs[1];
  if (std::find(accepted.begin(), accepted.end(), a.dtype) == accepted.end()) {
    std::vector<std::string> names;
    for (DataType t : accepted) names.push_back(DataTypeName(t));
    return NodeError(c.node, InputLabel(c.node, 0), ": dtype ", DataTypeName(a.dtype),
                     " is not supported (", absl::StrJoin(names, ", "), ")");
  }
  if (a.dtype != b.dtype) {
    return NodeError(c.node, InputLabel(c.node, 0), " (", DataTypeName(a.dtype), ") and ", InputLabel(c.node, 1),
                     " (", DataTypeName(b.dtype), ") have different dtypes");
  }
  auto shape = BroadcastInputs(c, 0, 2);
  if (!shape.ok()) return shape.status();
  return std::vector<TensorType>{{v1::BOOL, *shape}};
}

absl::Status RunCompare(RunContext& ctx, CompareOp op) {
  const HostTensor& a = *ctx.inputs[0];
  const HostTensor& b = *ctx.inputs[1];
  const HostTensor& out = ctx.outputs[0];
  const BroadcastMap ma(a.type().shape, out.type().shape), mb(b.type().shape, out.type().shape);
  const int64_t passes = device::VectorPasses(device::VectorKernel::kCompare);
  if (IsFloat(a.type().dtype)) {
    ForEachChunk(ctx, 3, passes, [&](int64_t s, int64_t len) {
      thread_local std::vector<float> xa, xb;
      const float* pa = ChunkAsFloat(a, ma, s, len, xa);
      const float* pb = ChunkAsFloat(b, mb, s, len, xb);
      kernels::Compare(op, pa, pb, out.mutable_as<uint8_t>() + s, static_cast<size_t>(len));
    });
    return absl::OkStatus();
  }
  const int64_t steps = ElementSize(a.type().dtype) == 8 ? 2 : 1;
  ForEachChunk(ctx, 3, steps * passes, [&](int64_t s, int64_t len) {
    thread_local std::vector<int64_t> xa, xb;
    xa.resize(static_cast<size_t>(len)), xb.resize(static_cast<size_t>(len));
    GatherBroadcast(a, ma, s, len, xa.data());
    GatherBroadcast(b, mb, s, len, xb.data());
    kernels::Compare(op, xa.data(), xb.data(), out.mutable_as<uint8_t>() + s, static_cast<size_t>(len));
  });
  return absl::OkStatus();
}

OpDef CompareDef(std::string name, CompareOp op, const std::vector<DataType>& accepted) {
  OpDef d;
  d.name = std::move(name);
  d.units = "Vector, MTE2, MTE3";
  d.task_type = device::TaskType::kAiVectorCore;
  d.dtypes = accepted;
  d.min_inputs = d.max_inputs = 2;
  d.infer = [&accepted](InferContext& c) { return InferCompare(c, accepted); };
  d.run = [op](RunContext& c) { return RunCompare(c, op); };
  return d;
}

}  // namespace

void RegisterCompareOps(OpRegistry& r) {
  r.Register(CompareDef("Equal", CompareOp::kEqual, kEqualTypes));
  r.Register(CompareDef("Less", CompareOp::kLess, kOrderedTypes));
  r.Register(CompareDef("LessOrEqual", CompareOp::kLessOrEqual, kOrderedTypes));
  r.Register(CompareDef("Greater", CompareOp::kGreater, kOrderedTypes));
  r.Register(CompareDef("GreaterOrEqual", CompareOp::kGreaterOrEqual, kOrderedTypes));
}

}  // namespace npu::graph::ops
