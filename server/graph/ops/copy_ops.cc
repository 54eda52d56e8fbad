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

// What a Slice copies, derived once at plan time (RunContext::State).
struct SliceSpec {
  Shape out;
  std::vector<int64_t> start, step;  // per input dim
};

absl::StatusOr<SliceSpec> ComputeSlice(const InferContext& c, const Shape& shape, const std::vector<int64_t>& starts,
                                       const std::vector<int64_t>& ends, std::vector<int64_t> axes,
                                       std::vector<int64_t> steps) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  const bool given_axes = HasInput(c, 3);
  if (!given_axes) {
    axes.resize(starts.size());
    std::iota(axes.begin(), axes.end(), 0);
  }
  if (!HasInput(c, 4)) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size()) {
    return NodeError(c.node, "starts, ends, axes and steps have ", starts.size(), ", ", ends.size(), ", ",
                     axes.size(), " and ", steps.size(), " entries; they must have the same number");
  }
  auto normal = NormalizeAxes(c.node, axes, rank, given_axes ? InputLabel(c.node, 3) : "the axis of starts");
  if (!normal.ok()) return normal.status();
  SliceSpec s{shape, std::vector<int64_t>(static_cast<size_t>(rank), 0),
              std::vector<int64_t>(static_cast<size_t>(rank), 1)};
  for (size_t i = 0; i < starts.size(); ++i) {
    const int64_t axis = (*normal)[i];
    auto range = CheckedSlice(starts[i], ends[i], steps[i], shape[axis], absl::StrCat("axis ", axis));
    if (!range.ok()) return AtNode(c.node, range.status());
    s.out[axis] = range->count;
    s.start[axis] = range->start;
    // One element or none: the step never moves, and a huge one would overflow the copy's stride.
    s.step[axis] = range->count > 1 ? steps[i] : 1;
  }
  return s;
}

absl::StatusOr<std::vector<TensorType>> InferSlice(InferContext& c) {
  std::vector<std::vector<int64_t>> args(5);
  for (int i = 1; i < static_cast<int>(c.inputs.size()); ++i) {
    if (!HasInput(c, i)) continue;
    auto v = ConstantInts(c, i);
    if (!v.ok()) return v.status();
    args[i] = *std::move(v);
  }
  auto spec = ComputeSlice(c, c.inputs[0]->shape, args[1], args[2], args[3], args[4]);
  if (!spec.ok()) return spec.status();
  std::vector<TensorType> out{{c.inputs[0]->dtype, spec->out}};
  c.Prepare(*std::move(spec));
  return out;
}

absl::Status RunSlice(RunContext& ctx) {
  const HostTensor& x = *ctx.inputs[0];
  const HostTensor& out = ctx.outputs[0];
  const SliceSpec& spec = ctx.State<SliceSpec>();
  const auto in_strides = RowMajorStrides(x.type().shape);
  StridedRegion r{out.type().shape, 0, 0, {}, RowMajorStrides(out.type().shape)};
  for (size_t d = 0; d < in_strides.size(); ++d) {
    r.src_base += spec.start[d] * in_strides[d];
    r.src_strides.push_back(spec.step[d] * in_strides[d]);
  }
  CopyRegion(ctx, x, out, r);
  return absl::OkStatus();
}

// ---- Expand ----------------------------------------------------------------

absl::StatusOr<std::vector<TensorType>> InferExpand(InferContext& c) {
  auto shape = ConstantShape(c, 1);
  if (!shape.ok()) return shape.status();
  if (auto n = CheckedElements(*shape, InputLabel(c.node, 1)); !n.ok()) return AtNode(c.node, n.status());
  auto out = BroadcastShapes(c.inputs[0]->shape, Shape(shape->begin(), shape->end()));
  if (!out.ok()) return AtNode(c.node, out.status());
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
  auto attr = c.attrs.Int("axis");
  if (!attr.ok()) return attr.status();
  const TensorType& first = *c.inputs[0];
  const int64_t rank = static_cast<int64_t>(first.shape.size());
  auto axis = NormalizeAxis(c.node, *attr, rank);
  if (!axis.ok()) return axis.status();
  std::vector<int64_t> extents;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const TensorType& t = *c.inputs[i];
    bool match = t.dtype == first.dtype && t.shape.size() == first.shape.size();
    for (int64_t d = 0; match && d < rank; ++d) match = d == *axis || t.shape[d] == first.shape[d];
    if (!match) {
      return NodeError(c.node, InputLabel(c.node, static_cast<int>(i)), " ", ToString(t), " does not match ",
                       ToString(first), " outside axis ", *attr);
    }
    extents.push_back(t.shape[*axis]);
  }
  Shape out = first.shape;
  auto total = CheckedExtentSum(extents, "the concatenated axis");
  if (!total.ok()) return AtNode(c.node, total.status());
  out[*axis] = *total;
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

absl::StatusOr<std::vector<int64_t>> SplitSizes(const InferContext& c, int64_t dim) {
  const int outputs = c.node.outputs_size();
  std::vector<int64_t> sizes;
  std::string what = "attribute \"split\"";
  if (HasInput(c, 1)) {
    auto given = ConstantInts(c, 1);
    if (!given.ok()) return given.status();
    sizes = *given;
    what = InputLabel(c.node, 1);
  } else {
    auto attr = c.attrs.Ints("split", {});
    if (!attr.ok()) return attr.status();
    sizes = *attr;
  }
  auto num_outputs = c.attrs.Int("num_outputs", outputs);
  if (!num_outputs.ok()) return num_outputs.status();
  if (*num_outputs != outputs) {
    return NodeError(c.node, "attribute \"num_outputs\" = ", *num_outputs, " but the node defines ", outputs,
                     " outputs");
  }
  if (c.attrs.Has("num_outputs") && !sizes.empty()) {
    return NodeError(c.node, "give either ", what, " or attribute \"num_outputs\", not both");
  }
  if (sizes.empty()) {  // equal parts; the last one smaller when it does not divide (opset 18)
    const int64_t part = (dim + outputs - 1) / outputs;  // dim <= kMaxElements: no overflow
    for (int i = 0; i < outputs; ++i) sizes.push_back(std::max<int64_t>(0, std::min(part, dim - part * i)));
    return sizes;
  }
  if (static_cast<int>(sizes.size()) != outputs) {
    return NodeError(c.node, what, " has ", sizes.size(), " entries for ", outputs, " outputs");
  }
  auto total = CheckedExtentSum(sizes, what);
  if (!total.ok()) return AtNode(c.node, total.status());
  if (*total != dim) {
    return NodeError(c.node, what, " adds up to ", *total, ", not the split dimension's ", dim);
  }
  return sizes;
}

absl::StatusOr<std::vector<TensorType>> InferSplit(InferContext& c) {
  const TensorType& x = *c.inputs[0];
  auto attr = c.attrs.Int("axis", 0);
  if (!attr.ok()) return attr.status();
  auto axis = NormalizeAxis(c.node, *attr, static_cast<int64_t>(x.shape.size()));
  if (!axis.ok()) return axis.status();
  auto sizes = SplitSizes(c, x.shape[*axis]);
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
              std::function<absl::Status(RunContext&)> run, int min_inputs, int max_inputs,
              std::vector<AttrDef> attributes = {}, std::vector<int> shape_inputs = {}) {
  OpDef d;
  d.name = std::move(name);
  d.units = "MTE2, MTE3";
  d.task_type = device::TaskType::kAiVectorCore;
  d.dtypes = kAllTypes;
  d.min_inputs = min_inputs;
  d.max_inputs = max_inputs;
  d.attributes = std::move(attributes);
  d.shape_inputs = std::move(shape_inputs);
  d.infer = std::move(infer);
  d.run = std::move(run);
  return d;
}

}  // namespace

void RegisterCopyOps(OpRegistry& r) {
  r.Register(CopyDef("Transpose", InferTranspose, RunTranspose, 1, 1, {{"perm", AttrKind::kInts}}));
  r.Register(CopyDef("Slice", InferSlice, RunSlice, 3, 5, {}, {1, 2, 3, 4}));
  r.Register(CopyDef("Expand", InferExpand, RunExpand, 2, 2, {}, {1}));
  OpDef concat = CopyDef("Concat", InferConcat, RunConcat, 1, 4096, {{"axis", AttrKind::kInt}});
  concat.variadic = true;
  r.Register(std::move(concat));
  OpDef split = CopyDef("Split", InferSplit, RunSplit, 1, 2,
                        {{"axis", AttrKind::kInt}, {"split", AttrKind::kInts}, {"num_outputs", AttrKind::kInt}}, {1});
  split.num_outputs = 256;
  r.Register(std::move(split));
}

}  // namespace npu::graph::ops
