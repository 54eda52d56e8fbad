// ReduceSum, ReduceMean, ReduceMax, ReduceMin (axes as attribute, or as input
// from opset 13/18; keepdims; noop_with_empty_axes) and ArgMax, on the Vector
// unit. Each output element reduces its slice in fp32 in index order (so the
// result does not depend on tiling); fp16 results are rounded once.
#include <algorithm>
#include <limits>
#include <vector>

#include "server/device/vector_passes.h"
#include "server/graph/element_access.h"
#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/parallel_for.h"
#include "server/graph/ops/shape_args.h"
#include "server/graph/vector_tiling.h"

namespace npu::graph::ops {
namespace {

enum class Reduce { kSum, kMean, kMax, kMin, kArgMax };

// Which input dims are reduced, and the output shape.
struct ReducePlan {
  std::vector<bool> reduced;
  Shape out;
};

absl::StatusOr<ReducePlan> PlanReduce(const v1::Node& node, const NodeAttributes& attrs, const Shape& in,
                                      Reduce kind, const HostTensor* axes_input) {
  const int64_t rank = static_cast<int64_t>(in.size());
  auto keepdims = attrs.Int("keepdims", 1);
  if (!keepdims.ok()) return keepdims.status();
  std::vector<int64_t> axes;
  std::string what = "attribute \"axes\"";
  if (kind == Reduce::kArgMax) {
    auto axis = attrs.Int("axis", 0);
    if (!axis.ok()) return axis.status();
    axes = {*axis};
    what = "attribute \"axis\"";
  } else if (axes_input != nullptr) {
    axes = TensorInts(*axes_input);
    what = InputLabel(node, 1);
  } else {
    auto a = attrs.Ints("axes", {});
    if (!a.ok()) return a.status();
    axes = *a;
  }
  auto noop = attrs.Int("noop_with_empty_axes", 0);
  if (!noop.ok()) return noop.status();
  // No axes: every dim (a scalar reduces to itself), or none with noop_with_empty_axes.
  ReducePlan p{std::vector<bool>(in.size(), axes.empty() && *noop == 0), {}};
  auto normal = NormalizeAxes(node, axes, rank, what);
  if (!normal.ok()) return normal.status();
  for (int64_t axis : *normal) p.reduced[axis] = true;
  for (int64_t d = 0; d < rank; ++d) {
    if (!p.reduced[d]) {
      p.out.push_back(in[d]);
    } else {
      if (in[d] == 0 && (kind == Reduce::kMax || kind == Reduce::kMin || kind == Reduce::kArgMax)) {
        return NodeError(node, "cannot reduce the empty dimension ", d, " of ", ShapeToString(in),
                         " (the maximum or minimum of no elements is undefined)");
      }
      if (*keepdims) p.out.push_back(1);
    }
  }
  return p;
}

absl::StatusOr<std::vector<TensorType>> InferReduce(InferContext& c, Reduce kind) {
  if (kind == Reduce::kArgMax) {
    if (auto s = c.attrs.CheckKnown({"axis", "keepdims", "select_last_index"}); !s.ok()) return s;
  } else if (auto s = c.attrs.CheckKnown({"axes", "keepdims", "noop_with_empty_axes"}); !s.ok()) {
    return s;
  }
  const TensorType& x = *c.inputs[0];
  if (!IsFloat(x.dtype) && x.dtype != v1::INT32) {
    return NodeError(c.node, InputLabel(c.node, 0), ": dtype ", DataTypeName(x.dtype),
                     " is not supported (FLOAT16, FLOAT32, INT32)");
  }
  if (HasInput(c, 1)) {
    if (auto v = ConstantInts(c, 1); !v.ok()) return v.status();
  }
  auto p = PlanReduce(c.node, c.attrs, x.shape, kind, HasInput(c, 1) ? c.constants[1] : nullptr);
  if (!p.ok()) return p.status();
  return std::vector<TensorType>{{kind == Reduce::kArgMax ? v1::INT64 : x.dtype, p->out}};
}

absl::Status RunReduce(RunContext& ctx, Reduce kind) {
  const HostTensor& x = *ctx.inputs[0];
  const HostTensor& out = ctx.outputs[0];
  const Shape& in = x.type().shape;
  auto plan = PlanReduce(ctx.node, ctx.attrs, in, kind, ctx.inputs.size() > 1 ? ctx.inputs[1] : nullptr);
  if (!plan.ok()) return plan.status();
  const bool last_index = ctx.attrs.Int("select_last_index", 0).value_or(0) != 0;
  const int rank = static_cast<int>(in.size());
  const auto strides = RowMajorStrides(in);
  // Offsets of one output's slice (reduced dims) and of each output's base (kept dims).
  std::vector<int64_t> slice{0};
  Shape kept_shape;
  std::vector<int64_t> kept_strides;
  for (int d = 0; d < rank; ++d) {
    if (plan->reduced[d]) {
      std::vector<int64_t> next;
      next.reserve(slice.size() * in[d]);
      for (int64_t base : slice) {
        for (int64_t i = 0; i < in[d]; ++i) next.push_back(base + i * strides[d]);
      }
      slice = std::move(next);
    } else {
      kept_shape.push_back(in[d]);
      kept_strides.push_back(strides[d]);
    }
  }
  const int64_t outputs = out.type().elements();
  const int64_t len = static_cast<int64_t>(slice.size());
  // Widen the input once (the MTE2 load into UB converts fp16 to fp32).
  std::vector<float> widened;
  const float* src = nullptr;
  if (x.type().dtype == v1::FLOAT32) {
    src = x.as<float>();
  } else {
    widened.resize(static_cast<size_t>(x.type().elements()));
    LoadAsFloat(x, 0, 1, x.type().elements(), widened.data());
    src = widened.data();
  }
  std::vector<float> result(static_cast<size_t>(outputs));
  std::vector<int64_t> arg(kind == Reduce::kArgMax ? static_cast<size_t>(outputs) : 0);
  const int64_t tiles = std::max<int64_t>(1, std::min<int64_t>(outputs, ctx.preset.vector_unit_cores()));
  ctx.work.tiles.assign(static_cast<size_t>(tiles), device::TileWork{});
  const int64_t in_bytes = static_cast<int64_t>(ElementSize(x.type().dtype));
  ParallelFor(tiles, [&](int64_t t) {
    device::TileWork& w = ctx.work.tiles[static_cast<size_t>(t)];
    w.pipeline_steps = 0;
    for (int64_t o = outputs * t / tiles; o < outputs * (t + 1) / tiles; ++o) {
      int64_t base = 0, rem = o;
      for (int d = static_cast<int>(kept_shape.size()) - 1; d >= 0; --d) {
        base += (rem % kept_shape[d]) * kept_strides[d];
        rem /= kept_shape[d];
      }
      const float* s = src + base;
      float acc = kind == Reduce::kMax || kind == Reduce::kArgMax ? -std::numeric_limits<float>::infinity()
                  : kind == Reduce::kMin                          ? std::numeric_limits<float>::infinity()
                                                                  : 0.0f;
      int64_t best = 0;
      for (int64_t i = 0; i < len; ++i) {
        const float v = s[slice[i]];
        switch (kind) {
          case Reduce::kSum: case Reduce::kMean: acc += v; break;
          case Reduce::kMax: acc = (v > acc || v != v) ? v : acc; break;
          case Reduce::kMin: acc = (v < acc || v != v) ? v : acc; break;
          case Reduce::kArgMax:
            if (v > acc || (last_index && v == acc) || (i == 0)) acc = v, best = i;
            break;
        }
      }
      if (kind == Reduce::kMean) acc = len ? acc / static_cast<float>(len) : std::numeric_limits<float>::quiet_NaN();
      result[o] = acc;
      if (kind == Reduce::kArgMax) {
        // The index along the (single) reduced axis: slice entries step by its stride.
        arg[o] = len ? slice[best] / std::max<int64_t>(1, slice.size() > 1 ? slice[1] : 1) : 0;
      }
      w += VectorChunkWork(len, len * in_bytes, 0, 4, device::VectorPasses(device::VectorKernel::kReduce));
    }
    w.mte3_bytes += static_cast<uint64_t>((outputs * (t + 1) / tiles - outputs * t / tiles) *
                                          static_cast<int64_t>(ElementSize(out.type().dtype)));
    w.pipeline_steps = std::max<uint64_t>(1, w.pipeline_steps);
  });
  if (kind == Reduce::kArgMax) {
    std::copy(arg.begin(), arg.end(), out.mutable_as<int64_t>());
  } else if (out.type().dtype == v1::INT32) {
    std::vector<int32_t> ints(result.begin(), result.end());
    StoreFromInt32(out, 0, outputs, ints.data());
  } else {
    StoreFromFloat(out, 0, outputs, result.data(), ctx.preset.fp16_saturation);
  }
  return absl::OkStatus();
}

OpDef ReduceDef(std::string name, Reduce kind) {
  OpDef d;
  d.name = std::move(name);
  d.units = "Vector, MTE2, MTE3";
  d.task_type = device::TaskType::kAiVectorCore;
  d.dtypes = {v1::FLOAT16, v1::FLOAT32, v1::INT32};
  d.max_inputs = kind == Reduce::kArgMax ? 1 : 2;
  d.infer = [kind](InferContext& c) { return InferReduce(c, kind); };
  d.run = [kind](RunContext& c) { return RunReduce(c, kind); };
  return d;
}

}  // namespace

void RegisterReduceOps(OpRegistry& r) {
  r.Register(ReduceDef("ReduceSum", Reduce::kSum));
  r.Register(ReduceDef("ReduceMean", Reduce::kMean));
  r.Register(ReduceDef("ReduceMax", Reduce::kMax));
  r.Register(ReduceDef("ReduceMin", Reduce::kMin));
  r.Register(ReduceDef("ArgMax", Reduce::kArgMax));
}

}  // namespace npu::graph::ops
