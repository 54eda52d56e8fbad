// Metadata-only ops: Reshape, Flatten, Squeeze, Unsqueeze, Identity and Dropout
// (inference). A row-major tensor's bytes do not change when only its shape
// does, so the output aliases the input's buffer (shared ownership, no copy,
// no device work): what a Da Vinci runtime does with a view.
#include <algorithm>
#include <memory>
#include <vector>

#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/shape_args.h"

namespace npu::graph::ops {
namespace {

const std::vector<DataType> kAllTypes = {v1::FLOAT16, v1::FLOAT32, v1::INT32, v1::INT8, v1::BOOL, v1::INT64};

// The output views the input's bytes. An input whose owner is not tracked (a
// request's bytes) stays untracked, so whoever keeps it still copies.
absl::Status RunAlias(RunContext& ctx) {
  const HostTensor& in = *ctx.inputs[0];
  const TensorType type = ctx.outputs[0].type();
  if (!in.owns_data()) {
    ctx.outputs[0] = HostTensor(type, nullptr, in.data());
  } else {
    auto keep = std::make_shared<HostTensor>(in);
    ctx.outputs[0] = HostTensor(type, std::shared_ptr<const void>(keep), in.data());
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<TensorType>> InferReshape(InferContext& c) {
  if (auto s = c.attrs.CheckKnown({"allowzero"}); !s.ok()) return s;
  auto allowzero = c.attrs.Int("allowzero", 0);
  if (!allowzero.ok()) return allowzero.status();
  auto target = ConstantInts(c, 1);
  if (!target.ok()) return target.status();
  const TensorType& x = *c.inputs[0];
  Shape out(target->begin(), target->end());
  int infer_at = -1;
  int64_t known = 1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == 0 && *allowzero == 0) {  // 0 copies the input's dim
      if (i >= x.shape.size()) return NodeError(c.node, "shape[", i, "] = 0 but the input has rank ", x.shape.size());
      out[i] = x.shape[i];
    }
    if (out[i] == -1) {
      if (infer_at >= 0) return NodeError(c.node, "shape has more than one -1");
      infer_at = static_cast<int>(i);
      continue;
    }
    if (out[i] < 0) return NodeError(c.node, "shape[", i, "] = ", out[i], " is negative");
    known *= out[i];
  }
  if (infer_at >= 0) {
    if (known == 0 || x.elements() % known != 0) {
      return NodeError(c.node, "cannot reshape ", ToString(x), " to ", ShapeToString(Shape(target->begin(), target->end())));
    }
    out[infer_at] = x.elements() / known;
  }
  const TensorType result{x.dtype, out};
  if (result.elements() != x.elements()) {
    return NodeError(c.node, "cannot reshape ", ToString(x), " (", x.elements(), " elements) to ",
                     ShapeToString(out), " (", result.elements(), " elements)");
  }
  return std::vector<TensorType>{result};
}

absl::StatusOr<std::vector<TensorType>> InferFlatten(InferContext& c) {
  if (auto s = c.attrs.CheckKnown({"axis"}); !s.ok()) return s;
  const TensorType& x = *c.inputs[0];
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  auto attr = c.attrs.Int("axis", 1);
  if (!attr.ok()) return attr.status();
  int64_t axis = *attr < 0 ? *attr + rank : *attr;
  if (axis < 0 || axis > rank) return NodeError(c.node, "axis ", *attr, " is out of range for rank ", rank);
  int64_t outer = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= x.shape[i];
  const int64_t inner = outer == 0 ? 0 : x.elements() / outer;
  return std::vector<TensorType>{{x.dtype, {outer, inner}}};
}

// Axes from the opset-13 input or the older attribute.
absl::StatusOr<std::vector<int64_t>> AxesOf(InferContext& c) {
  if (HasInput(c, 1)) return ConstantInts(c, 1);
  return c.attrs.Ints("axes", {});
}

absl::StatusOr<std::vector<TensorType>> InferSqueeze(InferContext& c) {
  if (auto s = c.attrs.CheckKnown({"axes"}); !s.ok()) return s;
  auto axes = AxesOf(c);
  if (!axes.ok()) return axes.status();
  const TensorType& x = *c.inputs[0];
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  std::vector<bool> drop(x.shape.size(), false);
  if (axes->empty()) {
    for (int64_t i = 0; i < rank; ++i) drop[i] = x.shape[i] == 1;
  }
  for (int64_t a : *axes) {
    auto axis = NormalizeAxis(c.node, a, rank);
    if (!axis.ok()) return axis.status();
    if (x.shape[*axis] != 1) return NodeError(c.node, "cannot squeeze axis ", a, " of size ", x.shape[*axis]);
    drop[*axis] = true;
  }
  Shape out;
  for (int64_t i = 0; i < rank; ++i) {
    if (!drop[i]) out.push_back(x.shape[i]);
  }
  return std::vector<TensorType>{{x.dtype, out}};
}

absl::StatusOr<std::vector<TensorType>> InferUnsqueeze(InferContext& c) {
  if (auto s = c.attrs.CheckKnown({"axes"}); !s.ok()) return s;
  auto axes = AxesOf(c);
  if (!axes.ok()) return axes.status();
  const TensorType& x = *c.inputs[0];
  const int64_t rank = static_cast<int64_t>(x.shape.size() + axes->size());
  std::vector<bool> inserted(static_cast<size_t>(rank), false);
  for (int64_t a : *axes) {
    auto axis = NormalizeAxis(c.node, a, rank);
    if (!axis.ok()) return axis.status();
    if (inserted[*axis]) return NodeError(c.node, "axis ", a, " is listed twice");
    inserted[*axis] = true;
  }
  Shape out;
  size_t next = 0;
  for (int64_t i = 0; i < rank; ++i) out.push_back(inserted[i] ? 1 : x.shape[next++]);
  return std::vector<TensorType>{{x.dtype, out}};
}

absl::StatusOr<std::vector<TensorType>> InferIdentity(InferContext& c) {
  if (auto s = c.attrs.CheckKnown({}); !s.ok()) return s;
  return std::vector<TensorType>{*c.inputs[0]};
}

absl::StatusOr<std::vector<TensorType>> InferDropout(InferContext& c) {
  if (auto s = c.attrs.CheckKnown({"seed"}); !s.ok()) return s;
  if (HasInput(c, 2)) {
    const HostTensor* training = c.constants[2];
    if (training == nullptr || training->type().dtype != v1::BOOL || training->as<uint8_t>()[0] != 0) {
      return NodeError(c.node, "input \"", c.node.inputs(2),
                       "\" (training_mode) must be a constant false: only inference is supported");
    }
  }
  return std::vector<TensorType>{*c.inputs[0], {v1::BOOL, c.inputs[0]->shape}};
}

absl::Status RunDropout(RunContext& ctx) {
  if (ctx.outputs.size() > 1) {  // the mask keeps everything at inference
    HostTensor& mask = ctx.outputs[1];
    std::fill_n(mask.mutable_as<uint8_t>(), mask.type().elements(), uint8_t{1});
  }
  return RunAlias(ctx);
}

OpDef ViewDef(std::string name, std::function<absl::StatusOr<std::vector<TensorType>>(InferContext&)> infer,
              int min_inputs, int max_inputs) {
  OpDef d;
  d.name = std::move(name);
  d.units = "none (view)";
  d.task_type = device::TaskType::kAiVectorCore;
  d.dtypes = kAllTypes;
  d.min_inputs = min_inputs;
  d.max_inputs = max_inputs;
  d.infer = std::move(infer);
  d.run = RunAlias;
  d.output_aliases_input = 0;
  return d;
}

}  // namespace

void RegisterViewOps(OpRegistry& r) {
  r.Register(ViewDef("Reshape", InferReshape, 2, 2));
  r.Register(ViewDef("Flatten", InferFlatten, 1, 1));
  r.Register(ViewDef("Squeeze", InferSqueeze, 1, 2));
  r.Register(ViewDef("Unsqueeze", InferUnsqueeze, 1, 2));
  r.Register(ViewDef("Identity", InferIdentity, 1, 1));
  OpDef dropout = ViewDef("Dropout", InferDropout, 1, 3);
  dropout.num_outputs = 2;
  dropout.run = RunDropout;
  r.Register(std::move(dropout));
}

}  // namespace npu::graph::ops
