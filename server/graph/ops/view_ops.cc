// Metadata-only ops: Reshape, Flatten, Squeeze, Unsqueeze, Identity and Dropout
// (inference). A row-major tensor's bytes do not change when only its shape
// does, so the output aliases the input's buffer (shared ownership, no copy,
// no device work): what a Da Vinci runtime does with a view.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/fp16.h"
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
  auto allowzero = c.attrs.Int("allowzero", 0);
  if (!allowzero.ok()) return allowzero.status();
  auto target = ConstantShape(c, 1);
  if (!target.ok()) return target.status();
  const TensorType& x = *c.inputs[0];
  const std::string what = InputLabel(c.node, 1);
  Shape out(target->begin(), target->end());
  int infer_at = -1;
  bool has_zero = false;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == 0) {
      has_zero = true;
      if (*allowzero == 0) {  // 0 copies the input's dim
        if (i >= x.shape.size()) {
          return NodeError(c.node, what, ": entry ", i, " is 0 (copy the input's dim) but the input has rank ",
                           x.shape.size());
        }
        out[i] = x.shape[i];
      }
    } else if (out[i] == -1) {
      if (infer_at >= 0) return NodeError(c.node, what, " has more than one -1");
      infer_at = static_cast<int>(i);
    } else if (out[i] < 0) {
      return NodeError(c.node, what, ": entry ", i, " is ", out[i], " (dims are >= 0, or -1 to infer one)");
    }
  }
  if (infer_at >= 0 && has_zero && *allowzero != 0) {
    return NodeError(c.node, what, " has both 0 and -1 while allowzero is set (ONNX forbids it)");
  }
  const int64_t elements = x.elements();
  if (infer_at >= 0) {
    Shape known = out;
    known.erase(known.begin() + infer_at);
    auto n = CheckedElements(known, what);
    if (!n.ok()) return AtNode(c.node, n.status());
    if (*n == 0 || elements % *n != 0) {
      return NodeError(c.node, "cannot reshape ", ToString(x), " to ", ShapeToString(*target), ": ", elements,
                       " elements do not divide into dims of ", *n);
    }
    out[infer_at] = elements / *n;
  }
  auto n = CheckedElements(out, what);
  if (!n.ok()) return AtNode(c.node, n.status());
  if (*n != elements) {
    return NodeError(c.node, "cannot reshape ", ToString(x), " (", elements, " elements) to ", ShapeToString(out), " (",
                     *n, " elements)");
  }
  return std::vector<TensorType>{{x.dtype, out}};
}

absl::StatusOr<std::vector<TensorType>> InferFlatten(InferContext& c) {
  const TensorType& x = *c.inputs[0];
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  auto attr = c.attrs.Int("axis", 1);
  if (!attr.ok()) return attr.status();
  // The axis may name the end (rank): ONNX's range is [-rank, rank], negative
  // counting from rank; a scalar flattens to [1, 1].
  if (auto checked = NormalizeAxis(c.node, *attr, *attr < 0 ? rank : rank + 1); !checked.ok()) {
    return checked.status();
  }
  const size_t axis = static_cast<size_t>(*attr < 0 ? *attr + rank : *attr);
  const absl::Span<const int64_t> dims(x.shape);
  auto outer = CheckedElements(dims.subspan(0, axis), "the flattened outer dims");
  auto inner = CheckedElements(dims.subspan(axis), "the flattened inner dims");
  if (!outer.ok()) return AtNode(c.node, outer.status());
  if (!inner.ok()) return AtNode(c.node, inner.status());
  return std::vector<TensorType>{{x.dtype, {*outer, *inner}}};
}

// Axes from the opset-13 input or the older attribute, and where they came from.
absl::StatusOr<std::vector<int64_t>> AxesOf(InferContext& c, std::string* what) {
  *what = HasInput(c, 1) ? InputLabel(c.node, 1) : "attribute \"axes\"";
  if (HasInput(c, 1)) return ConstantInts(c, 1);
  return c.attrs.Ints("axes", {});
}

absl::StatusOr<std::vector<TensorType>> InferSqueeze(InferContext& c) {
  std::string what;
  auto axes = AxesOf(c, &what);
  if (!axes.ok()) return axes.status();
  const TensorType& x = *c.inputs[0];
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  std::vector<bool> drop(x.shape.size(), false);
  if (axes->empty()) {  // every dim of size 1 (a scalar stays a scalar)
    for (int64_t i = 0; i < rank; ++i) drop[i] = x.shape[i] == 1;
  }
  auto normal = NormalizeAxes(c.node, *axes, rank, what);
  if (!normal.ok()) return normal.status();
  for (int64_t axis : *normal) {
    if (x.shape[axis] != 1) {
      return NodeError(c.node, what, ": cannot squeeze axis ", axis, " of size ", x.shape[axis], " (input ",
                       ToString(x), ")");
    }
    drop[axis] = true;
  }
  Shape out;
  for (int64_t i = 0; i < rank; ++i) {
    if (!drop[i]) out.push_back(x.shape[i]);
  }
  return std::vector<TensorType>{{x.dtype, out}};
}

absl::StatusOr<std::vector<TensorType>> InferUnsqueeze(InferContext& c) {
  std::string what;
  auto axes = AxesOf(c, &what);
  if (!axes.ok()) return axes.status();
  const TensorType& x = *c.inputs[0];
  // Axes index the output, whose rank is the input's plus one per axis.
  const int64_t rank = static_cast<int64_t>(x.shape.size() + axes->size());
  if (rank > kMaxRank) return NodeError(c.node, what, ": the output rank ", rank, " exceeds ", kMaxRank);
  auto normal = NormalizeAxes(c.node, *axes, rank, what);
  if (!normal.ok()) return normal.status();
  std::vector<bool> inserted(static_cast<size_t>(rank), false);
  for (int64_t axis : *normal) inserted[axis] = true;
  Shape out;
  size_t next = 0;
  for (int64_t i = 0; i < rank; ++i) out.push_back(inserted[i] ? 1 : x.shape[next++]);
  return std::vector<TensorType>{{x.dtype, out}};
}

absl::StatusOr<std::vector<TensorType>> InferIdentity(InferContext& c) {
  return std::vector<TensorType>{*c.inputs[0]};
}

// Dropout's ratio when the node gives it as a constant scalar; ONNX's default
// is 0.5. Absent (nullopt) when it is computed.
std::optional<double> ConstantRatio(const InferContext& c) {
  if (!HasInput(c, 1)) return 0.5;
  const HostTensor* ratio = c.constants[1];
  if (ratio == nullptr || ratio->type().elements() != 1) return std::nullopt;
  switch (ratio->type().dtype) {
    case v1::FLOAT32:
      return ratio->as<float>()[0];
    case v1::FLOAT16:
      return kernels::HalfToFloat(ratio->as<uint16_t>()[0]);
    default:
      return std::nullopt;
  }
}

absl::StatusOr<std::vector<TensorType>> InferDropout(InferContext& c) {
  if (HasInput(c, 2)) {
    const HostTensor* training = c.constants[2];
    if (training == nullptr || training->type().dtype != v1::BOOL || training->type().elements() != 1) {
      return NodeError(c.node, InputLabel(c.node, 2), " must be a constant BOOL scalar (training_mode)");
    }
    // Training with a ratio of 0 keeps every element, unscaled: the same as
    // inference (torch exports it so for F.dropout(x, p=0.0) in eval mode,
    // whose `training` defaults to true, as torchvision's Swin does).
    const std::optional<double> ratio = ConstantRatio(c);
    if (training->as<uint8_t>()[0] != 0 && !ratio) {
      return NodeError(c.node, InputLabel(c.node, 1), " must be a constant scalar (the ratio, training_mode is true)");
    }
    if (training->as<uint8_t>()[0] != 0 && *ratio != 0.0) {
      return NodeError(c.node, InputLabel(c.node, 2), " (training_mode) is true with ratio ", *ratio,
                       ": only inference (or a ratio of 0) is supported");
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
              int min_inputs, int max_inputs, std::vector<AttrDef> attributes = {},
              std::vector<int> shape_inputs = {}) {
  OpDef d;
  d.name = std::move(name);
  d.units = "none (view)";
  d.task_type = device::TaskType::kAiVectorCore;
  d.dtypes = kAllTypes;
  d.min_inputs = min_inputs;
  d.max_inputs = max_inputs;
  d.attributes = std::move(attributes);
  d.shape_inputs = std::move(shape_inputs);
  d.infer = std::move(infer);
  d.run = RunAlias;
  d.output_aliases_input = 0;
  return d;
}

}  // namespace

void RegisterViewOps(OpRegistry& r) {
  r.Register(ViewDef("Reshape", InferReshape, 2, 2, {{"allowzero", AttrKind::kInt}}, {1}));
  r.Register(ViewDef("Flatten", InferFlatten, 1, 1, {{"axis", AttrKind::kInt}}));
  r.Register(ViewDef("Squeeze", InferSqueeze, 1, 2, {{"axes", AttrKind::kInts}}, {1}));
  r.Register(ViewDef("Unsqueeze", InferUnsqueeze, 1, 2, {{"axes", AttrKind::kInts}}, {1}));
  r.Register(ViewDef("Identity", InferIdentity, 1, 1));
  OpDef dropout = ViewDef("Dropout", InferDropout, 1, 3, {{"seed", AttrKind::kInt}});
  dropout.num_outputs = 2;
  dropout.run = RunDropout;
  r.Register(std::move(dropout));
}

}  // namespace npu::graph::ops
