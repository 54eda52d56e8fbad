// Data movement ops that copy a strided region: Transpose, Slice, Expand,
// Concat and Split. All run on the MTEs (strided_copy.h): bytes in, bytes out,
// no Vector repeats.
#include <algorithm>
#include <limits>
#include <numeric>
#include <vector>

#include "server/graph/broadcast.h"
#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/shape_args.h"
#include "server/graph/ops/strided_copy.h"

namespace npu::graph::ops {
namespace {

const std::vector<DataType> kAllTypes = {v1::FLOAT16, v1::FLOAT32, v1::INT32, v1::INT8, v1::BOOL, v1::INT64};

// ---- Transpose -------------------------------------------------------------

absl::StatusOr<std::vector<int64_t>> PermOf(const v1::Node& node, const NodeAttributes& attrs, int64_t rank) {
  std::vector<int64_t> reversed(static_cast<size_t>(rank));
  std::iota(reversed.rbegin(), reversed.rend(), 0);
  auto perm = attrs.Ints("perm", reversed);
  if (!perm.ok()) return perm.status();
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  if (static_cast<int64_t>(perm->size()) != rank) {
    return NodeError(node, "attribute \"perm\" has ", perm->size(), " entries for rank ", rank);
  }
  for (int64_t p : *perm) {
    if (p < 0 || p >= rank || seen[p]) return NodeError(node, "attribute \"perm\" is not a permutation");
    seen[p] = true;
  }
  return perm;
}

absl::StatusOr<std::vector<TensorType>> InferTranspose(InferContext& c) {
  if (auto s = c.attrs.CheckKnown({"perm"}); !s.ok()) return s;
  const TensorType& x = *c.inputs[0];
  auto perm = PermOf(c.node, c.attrs, static_cast<int64_t>(x.shape.size()));
  if (!perm.ok()) return perm.status();
  Shape out;
  for (int64_t p : *perm) out.push_back(x.shape[p]);
  return std::vector<TensorType>{{x.dtype, out}};
}

absl::Status RunTranspose(RunContext& ctx) {
  const HostTensor& x = *ctx.inputs[0];
  const HostTensor& out = ctx.outputs[0];
  auto perm = PermOf(ctx.node, ctx.attrs, static_cast<int64_t>(x.type().shape.size()));
  if (!perm.ok()) return perm.status();
  const auto in_strides = RowMajorStrides(x.type().shape);
  StridedRegion r{out.type().shape, 0, 0, {}, RowMajorStrides(out.type().shape)};
  for (int64_t p : *perm) r.src_strides.push_back(in_strides[p]);
  CopyRegion(ctx, x, out, r);
  return absl::OkStatus();
}

// ---- Slice -----------------------------------------------------------------

struct SliceSpec {
  Shape out;
  std::vector<int64_t> start, step;  // per input dim
};

absl::StatusOr<SliceSpec> ComputeSlice(const v1::Node& node, const Shape& shape, std::vector<int64_t> starts,
                                       std::vector<int64_t> ends, std::vector<int64_t> axes,
                                       std::vector<int64_t> steps) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (axes.empty()) {
    axes.resize(starts.size());
    std::iota(axes.begin(), axes.end(), 0);
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size()) {
    return NodeError(node, "starts, ends, axes and steps have different lengths");
  }
  SliceSpec s{shape, std::vector<int64_t>(static_cast<size_t>(rank), 0), std::vector<int64_t>(static_cast<size_t>(rank), 1)};
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (size_t i = 0; i < starts.size(); ++i) {
    auto axis = NormalizeAxis(node, axes[i], rank);
    if (!axis.ok()) return axis.status();
    if (seen[*axis]) return NodeError(node, "axis ", axes[i], " is sliced twice");
    seen[*axis] = true;
    const int64_t dim = shape[*axis], step = steps[i];
    if (step == 0) return NodeError(node, "steps[", i, "] is 0");
    // ONNX rules: negative start/end count from the end, then clamp to
    // [0, dim] (step > 0); start to [0, dim - 1] and end to [-1, dim - 1]
    // (step < 0), so INT64_MIN as end means "through the front".
    int64_t b = starts[i] < 0 ? starts[i] + dim : starts[i];
    int64_t e = ends[i] < 0 ? ends[i] + dim : ends[i];
    if (step > 0) {
      b = std::clamp<int64_t>(b, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      s.out[*axis] = e > b ? (e - b + step - 1) / step : 0;
    } else {
      b = std::max<int64_t>(0, std::min<int64_t>(b, dim - 1));
      e = std::clamp<int64_t>(e, -1, dim - 1);
      s.out[*axis] = b > e ? (b - e + (-step) - 1) / (-step) : 0;
    }
    s.start[*axis] = b;
    s.step[*axis] = step;
  }
  return s;
}

absl::StatusOr<SliceSpec> SliceOf(const v1::Node& node, const Shape& shape, const std::vector<const HostTensor*>& k) {
  auto ints = [&](size_t i) { return i < k.size() && k[i] ? TensorInts(*k[i]) : std::vector<int64_t>{}; };
  return ComputeSlice(node, shape, ints(1), ints(2), ints(3), ints(4));
}

absl::StatusOr<std::vector<TensorType>> InferSlice(InferContext& c) {
  if (auto s = c.attrs.CheckKnown({}); !s.ok()) return s;
  for (int i = 1; i < static_cast<int>(c.inputs.size()); ++i) {
    if (!HasInput(c, i)) continue;
    if (auto v = ConstantInts(c, i); !v.ok()) return v.status();
  }
  auto spec = SliceOf(c.node, c.inputs[0]->shape, c.constants);
  if (!spec.ok()) return spec.status();
  return std::vector<TensorType>{{c.inputs[0]->dtype, spec->out}};
}

absl::Status RunSlice(RunContext& ctx) {
  const HostTensor& x = *ctx.inputs[0];
  const HostTensor& out = ctx.outputs[0];
  auto spec = SliceOf(ctx.node, x.type().shape, ctx.inputs);
  if (!spec.ok()) return spec.status();
  const auto in_strides = RowMajorStrides(x.type().shape);
  StridedRegion r{out.type().shape, 0, 0, {}, RowMajorStrides(out.type().shape)};
  for (size_t d = 0; d < in_strides.size(); ++d) {
    r.src_base += spec->start[d] * in_strides[d];
    r.src_strides.push_back(spec->step[d] * in_strides[d]);
  }
  CopyRegion(ctx, x, out, r);
  return absl::OkStatus();
}

// ---- Expand ----------------------------------------------------------------

absl::StatusOr<std::vector<TensorType>> InferExpand(InferContext& c) {
  if (auto s = c.attrs.CheckKnown({}); !s.ok()) return s;
  auto shape = ConstantInts(c, 1);
  if (!shape.ok()) return shape.status();
  auto out = BroadcastShapes(c.inputs[0]->shape, Shape(shape->begin(), shape->end()));
  if (!out.ok()) return NodeError(c.node, out.status().message());
  return std::vector<TensorType>{{c.inputs[0]->dtype, *out}};
}

absl::Status RunExpand(RunContext& ctx) {
  const HostTensor& x = *ctx.inputs[0];
  const HostTensor& out = ctx.outputs[0];
  const Shape& in = x.type().shape;
  const Shape& os = out.type().shape;
  const auto in_strides = RowMajorStrides(in);
  StridedRegion r{os, 0, 0, std::vector<int64_t>(os.size(), 0), RowMajorStrides(os)};
  const size_t lead = os.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d) r.src_strides[lead + d] = in[d] == 1 ? 0 : in_strides[d];
  CopyRegion(ctx, x, out, r);
  return absl::OkStatus();
}

// ---- Concat / Split --------------------------------------------------------

absl::StatusOr<std::vector<TensorType>> InferConcat(InferContext& c) {
  if (auto s = c.attrs.CheckKnown({"axis"}); !s.ok()) return s;
  auto attr = c.attrs.Int("axis");
  if (!attr.ok()) return attr.status();
  const TensorType& first = *c.inputs[0];
  const int64_t rank = static_cast<int64_t>(first.shape.size());
  auto axis = NormalizeAxis(c.node, *attr, rank);
  if (!axis.ok()) return axis.status();
  Shape out = first.shape;
  out[*axis] = 0;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const TensorType& t = *c.inputs[i];
    bool match = t.dtype == first.dtype && t.shape.size() == first.shape.size();
    for (int64_t d = 0; match && d < rank; ++d) match = d == *axis || t.shape[d] == first.shape[d];
    if (!match) {
      return NodeError(c.node, "input \"", c.node.inputs(static_cast<int>(i)), "\" ", ToString(t),
                       " does not match ", ToString(first), " outside axis ", *attr);
    }
    out[*axis] += t.shape[*axis];
  }
  return std::vector<TensorType>{{first.dtype, out}};
}

absl::Status RunConcat(RunContext& ctx) {
  const HostTensor& out = ctx.outputs[0];
  const int64_t rank = static_cast<int64_t>(out.type().shape.size());
  const int64_t axis = NormalizeAxis(ctx.node, *ctx.attrs.Int("axis"), rank).value();
  const auto out_strides = RowMajorStrides(out.type().shape);
  int64_t offset = 0;
  for (const HostTensor* in : ctx.inputs) {
    StridedRegion r{in->type().shape, 0, offset * out_strides[axis], RowMajorStrides(in->type().shape), out_strides};
    CopyRegion(ctx, *in, out, r);
    offset += in->type().shape[axis];
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int64_t>> SplitSizes(const v1::Node& node, const NodeAttributes& attrs, int64_t dim,
                                                const HostTensor* split_input, int outputs) {
  std::vector<int64_t> sizes;
  if (split_input != nullptr) {
    sizes = TensorInts(*split_input);
  } else {
    auto attr = attrs.Ints("split", {});
    if (!attr.ok()) return attr.status();
    sizes = *attr;
  }
  if (sizes.empty()) {  // equal parts; the last one smaller when it does not divide (opset 18)
    const int64_t part = (dim + outputs - 1) / outputs;
    for (int i = 0; i < outputs; ++i) sizes.push_back(std::max<int64_t>(0, std::min(part, dim - part * i)));
  }
  int64_t total = 0;
  for (int64_t s : sizes) total += s;
  if (static_cast<int>(sizes.size()) != outputs || total != dim) {
    return NodeError(node, "split sizes do not match ", outputs, " outputs over a dimension of ", dim);
  }
  return sizes;
}

absl::StatusOr<std::vector<TensorType>> InferSplit(InferContext& c) {
  if (auto s = c.attrs.CheckKnown({"axis", "split", "num_outputs"}); !s.ok()) return s;
  const TensorType& x = *c.inputs[0];
  auto attr = c.attrs.Int("axis", 0);
  if (!attr.ok()) return attr.status();
  auto axis = NormalizeAxis(c.node, *attr, static_cast<int64_t>(x.shape.size()));
  if (!axis.ok()) return axis.status();
  if (HasInput(c, 1)) {
    if (auto v = ConstantInts(c, 1); !v.ok()) return v.status();
  }
  auto sizes = SplitSizes(c.node, c.attrs, x.shape[*axis], HasInput(c, 1) ? c.constants[1] : nullptr,
                          c.node.outputs_size());
  if (!sizes.ok()) return sizes.status();
  std::vector<TensorType> types;
  for (int64_t s : *sizes) {
    types.push_back(x);
    types.back().shape[*axis] = s;
  }
  return types;
}

absl::Status RunSplit(RunContext& ctx) {
  const HostTensor& x = *ctx.inputs[0];
  const int64_t rank = static_cast<int64_t>(x.type().shape.size());
  const int64_t axis = NormalizeAxis(ctx.node, ctx.attrs.Int("axis", 0).value(), rank).value();
  const auto in_strides = RowMajorStrides(x.type().shape);
  int64_t offset = 0;
  for (const HostTensor& out : ctx.outputs) {
    StridedRegion r{out.type().shape, offset * in_strides[axis], 0, in_strides, RowMajorStrides(out.type().shape)};
    CopyRegion(ctx, x, out, r);
    offset += out.type().shape[axis];
  }
  return absl::OkStatus();
}

OpDef CopyDef(std::string name, std::function<absl::StatusOr<std::vector<TensorType>>(InferContext&)> infer,
              std::function<absl::Status(RunContext&)> run, int min_inputs, int max_inputs) {
  OpDef d;
  d.name = std::move(name);
  d.units = "MTE2, MTE3";
  d.task_type = device::TaskType::kAiVectorCore;
  d.dtypes = kAllTypes;
  d.min_inputs = min_inputs;
  d.max_inputs = max_inputs;
  d.infer = std::move(infer);
  d.run = std::move(run);
  return d;
}

}  // namespace

void RegisterCopyOps(OpRegistry& r) {
  r.Register(CopyDef("Transpose", InferTranspose, RunTranspose, 1, 1));
  r.Register(CopyDef("Slice", InferSlice, RunSlice, 3, 5));
  r.Register(CopyDef("Expand", InferExpand, RunExpand, 2, 2));
  r.Register(CopyDef("Concat", InferConcat, RunConcat, 1, 4096));
  OpDef split = CopyDef("Split", InferSplit, RunSplit, 1, 2);
  split.num_outputs = 256;
  r.Register(std::move(split));
}

}  // namespace npu::graph::ops
