// ConstantOfShape (ONNX opset 9-20): a tensor of the constant input shape
// filled with the one element of attribute `value` (default FLOAT32 0), whose
// dtype is the output's. The fill is a Vector dup into UB and MTE3 bursts out.
#include <array>
#include <cstring>
#include <vector>

#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/shape_args.h"
#include "server/graph/ops/vector_chunks.h"

namespace npu::graph::ops {
namespace {

struct FillPlan {
  std::array<std::byte, 8> value{};
};

absl::StatusOr<std::vector<TensorType>> InferConstantOfShape(InferContext& c) {
  auto dims = ConstantShape(c, 0);
  if (!dims.ok()) return dims.status();
  if (auto n = CheckedElements(*dims, InputLabel(c.node, 0)); !n.ok()) return AtNode(c.node, n.status());
  FillPlan plan;
  DataType dtype = v1::FLOAT32;
  if (c.attrs.Has("value")) {
    const v1::AttributeValue& a = c.node.attributes().at("value");
    auto type = ValidateType(a.t().dtype(), a.t().shape(), NodeLabel(c.node) + " attribute \"value\"");
    if (!type.ok()) return type.status();
    if (type->elements() != 1 || a.t().data().size() != type->bytes()) {
      return NodeError(c.node, "attribute \"value\" must hold exactly one element, got ", ToString(*type), " with ",
                       a.t().data().size(), " bytes");
    }
    if (auto s = CheckBoolBytes(*type, a.t().data().data(), NodeLabel(c.node) + " attribute \"value\""); !s.ok()) {
      return s;
    }
    dtype = type->dtype;
    std::memcpy(plan.value.data(), a.t().data().data(), type->bytes());
  }
  c.Prepare(plan);
  return std::vector<TensorType>{{dtype, Shape(dims->begin(), dims->end())}};
}

absl::Status RunConstantOfShape(RunContext& ctx) {
  const HostTensor& out = ctx.outputs[0];
  const std::byte* value = ctx.State<FillPlan>().value.data();
  const int64_t esize = static_cast<int64_t>(ElementSize(out.type().dtype));
  constexpr int64_t kBlock = 16384;  // elements per burst
  const int64_t n = out.type().elements();
  ForEachUnitTile(ctx, (n + kBlock - 1) / kBlock, [&](device::TileWork& w, int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t end = std::min(n, (b + 1) * kBlock);
      for (int64_t i = b * kBlock; i < end; ++i) std::memcpy(out.mutable_data() + i * esize, value, esize);
      w.vector_instructions += 1;
      w.mte3_bytes += static_cast<uint64_t>((end - b * kBlock) * esize);
      w.scalar_instructions += 2;
      ++w.pipeline_steps;
    }
  });
  return absl::OkStatus();
}

}  // namespace

void RegisterConstantOfShapeOp(OpRegistry& r) {
  OpDef d;
  d.name = "ConstantOfShape";
  d.units = "Vector (dup), MTE3";
  d.task_type = device::TaskType::kAiVectorCore;
  d.dtypes = {v1::FLOAT16, v1::FLOAT32, v1::INT32, v1::INT8, v1::BOOL, v1::INT64};
  d.min_inputs = d.max_inputs = 1;
  d.attributes = {{"value", AttrKind::kTensor}};
  d.shape_inputs = {0};
  d.infer = InferConstantOfShape;
  d.run = RunConstantOfShape;
  r.Register(std::move(d));
}

}  // namespace npu::graph::ops
