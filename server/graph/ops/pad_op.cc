// Pad (ONNX opsets 13-19): pads (and opset 18's axes) are constant inputs, so
// the output shape and the source of every output index are planned once
// (dim_map_copy.h); constant_value is read at run time. Modes: constant,
// reflect (mirror without repeating the edge, numpy's "reflect", repeating the
// mirror when a pad exceeds the dim), edge (repeat the edge) and wrap
// (periodic). A negative pad crops; the other modes see the uncropped input,
// as ONNX's reference (pad, then crop) does.
#include <array>
#include <cstring>
#include <numeric>
#include <vector>

#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/dim_map_copy.h"
#include "server/graph/ops/pad_source.h"
#include "server/graph/ops/shape_args.h"

namespace npu::graph::ops {
namespace {

absl::StatusOr<PadMode> ModeOf(const InferContext& c) {
  auto mode = c.attrs.String("mode", "constant");  // one of the schema's choices
  if (!mode.ok()) return mode.status();
  return PadModeNamed(*mode);
}

struct PadPlan {
  DimMap map;
};

absl::StatusOr<std::vector<TensorType>> InferPad(InferContext& c) {
  auto mode = ModeOf(c);
  if (!mode.ok()) return mode.status();
  const TensorType& x = *c.inputs[0];
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  auto pads = ConstantInts(c, 1);
  if (!pads.ok()) return pads.status();
  std::vector<int64_t> axes(static_cast<size_t>(rank));
  std::iota(axes.begin(), axes.end(), 0);
  if (HasInput(c, 3)) {
    auto given = ConstantInts(c, 3);
    if (!given.ok()) return given.status();
    auto normal = NormalizeAxes(c.node, *given, rank, InputLabel(c.node, 3));
    if (!normal.ok()) return normal.status();
    axes = *normal;
  }
  if (pads->size() != 2 * axes.size()) {
    return NodeError(c.node, InputLabel(c.node, 1), " has ", pads->size(), " entries; ", axes.size(),
                     " axes need ", 2 * axes.size(), " (all begins, then all ends)");
  }
  if (HasInput(c, 2)) {
    const TensorType& v = *c.inputs[2];
    if (v.dtype != x.dtype) {
      return NodeError(c.node, InputLabel(c.node, 2), ": constant_value is ", DataTypeName(v.dtype), ", data is ",
                       DataTypeName(x.dtype));
    }
    if (v.elements() != 1) {
      return NodeError(c.node, InputLabel(c.node, 2), ": constant_value must be a scalar, got ",
                       ShapeToString(v.shape));
    }
  }
  // A pad past any tensor's extent is no pad a tensor could take; bounding
  // each keeps out - begin from overflowing (pads [INT64_MIN, INT64_MAX] sum
  // to a valid -1).
  for (int64_t v : *pads) {
    if (v < -kMaxElements || v > kMaxElements) {
      return NodeError(c.node, InputLabel(c.node, 1), ": pad ", v, " is outside [-", kMaxElements, ", ",
                       kMaxElements, "]");
    }
  }
  std::vector<int64_t> begin(static_cast<size_t>(rank), 0), end(static_cast<size_t>(rank), 0);
  for (size_t k = 0; k < axes.size(); ++k) {
    begin[axes[k]] = (*pads)[k];
    end[axes[k]] = (*pads)[k + axes.size()];
  }
  Shape out(x.shape);
  for (int64_t d = 0; d < rank; ++d) {
    auto grown = CheckedAdd(x.shape[d], begin[d], InputLabel(c.node, 1));
    if (grown.ok()) grown = CheckedAdd(*grown, end[d], InputLabel(c.node, 1));
    if (!grown.ok()) return AtNode(c.node, grown.status());
    if (*grown < 0) {
      return NodeError(c.node, InputLabel(c.node, 1), ": pads ", begin[d], " and ", end[d], " crop axis ", d,
                       " of size ", x.shape[d], " below zero");
    }
    if (*mode != PadMode::kConstant && x.shape[d] == 0 && *grown > 0) {
      return NodeError(c.node, "axis ", d, " is empty: mode ", Quoted(*c.attrs.String("mode", "")),
                       " has no element to repeat");
    }
    out[d] = *grown;
  }
  const TensorType type{x.dtype, out};
  if (auto n = CheckedElements(out, "the padded output"); !n.ok()) return AtNode(c.node, n.status());
  if (auto b = CheckedBytes(type, c.max_tensor_bytes, "the padded output"); !b.ok()) return AtNode(c.node, b.status());
  const PadMode m = *mode;
  PadPlan plan{MakeDimMap(x.shape, out, [&](int64_t d, int64_t o) { return PadSourceIndex(m, o - begin[d], x.shape[d]); })};
  c.Prepare(std::move(plan));
  return std::vector<TensorType>{type};
}

absl::Status RunPad(RunContext& ctx) {
  const HostTensor& x = *ctx.inputs[0];
  std::array<std::byte, 8> fill{};  // 0 of every dtype
  if (ctx.inputs.size() > 2 && ctx.inputs[2] != nullptr) {
    std::memcpy(fill.data(), ctx.inputs[2]->data(), ElementSize(x.type().dtype));
  }
  CopyByDimMap(ctx, x, ctx.outputs[0], ctx.State<PadPlan>().map, fill.data());
  return absl::OkStatus();
}

}  // namespace

void RegisterPadOp(OpRegistry& r) {
  OpDef d;
  d.name = "Pad";
  d.units = "MTE2, MTE3, Vector (fill)";
  d.task_type = device::TaskType::kAiVectorCore;
  d.dtypes = {v1::FLOAT16, v1::FLOAT32, v1::INT32, v1::INT8, v1::BOOL, v1::INT64};
  d.min_inputs = 2;
  d.max_inputs = 4;
  d.attributes = {{"mode", AttrKind::kString, {"constant", "reflect", "edge", "wrap"}}};
  d.shape_inputs = {1, 3};
  d.infer = InferPad;
  d.run = RunPad;
  r.Register(std::move(d));
}

}  // namespace npu::graph::ops
