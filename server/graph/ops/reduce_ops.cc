// ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2,
// ReduceSumSquare, ReduceLogSumExp, ReduceLogSum (axes as attribute, or as input from opset
// 13/18; keepdims; noop_with_empty_axes), ArgMax and ArgMin, on the Vector unit. Each
// output element reduces its slice in fp32 in index order (so the result does
// not depend on tiling); fp16 results are rounded once. LogSumExp subtracts
// the slice's maximum first, as torch.logsumexp does (no overflow).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/vector_kernels.h"
#include "server/device/vector_passes.h"
#include "server/graph/element_access.h"
#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/shape_args.h"
#include "server/graph/ops/vector_chunks.h"
#include "server/graph/vector_tiling.h"

namespace npu::graph::ops {
namespace {

enum class Reduce { kSum, kMean, kMax, kMin, kArgMax, kArgMin, kProd, kL1, kL2, kSumSquare, kLogSumExp, kLogSum };

// ArgMax and ArgMin: one axis (an attribute), INT64 indices.
bool IsArg(Reduce kind) { return kind == Reduce::kArgMax || kind == Reduce::kArgMin; }

// The reductions the row kernels do not have: folded element by element.
bool IsElementFold(Reduce kind) {
  return kind == Reduce::kProd || kind == Reduce::kL1 || kind == Reduce::kL2 || kind == Reduce::kSumSquare ||
         kind == Reduce::kLogSumExp || kind == Reduce::kLogSum;
}

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
  if (IsArg(kind)) {
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
      if (in[d] == 0 && (kind == Reduce::kMax || kind == Reduce::kMin || IsArg(kind))) {
        return NodeError(node, "cannot reduce the empty dimension ", d, " of ", ShapeToString(in),
                         " (the maximum or minimum of no elements is undefined)");
      }
      if (*keepdims) p.out.push_back(1);
    }
  }
  return p;
}

absl::StatusOr<std::vector<TensorType>> InferReduce(InferContext& c, Reduce kind) {
  const TensorType& x = *c.inputs[0];
  if (IsElementFold(kind) && !IsFloat(x.dtype)) {
    return NodeError(c.node, InputLabel(c.node, 0), ": dtype ", DataTypeName(x.dtype),
                     " is not supported (FLOAT16, FLOAT32)");
  }
  if (!IsFloat(x.dtype) && x.dtype != v1::INT32) {
    return NodeError(c.node, InputLabel(c.node, 0), ": dtype ", DataTypeName(x.dtype),
                     " is not supported (FLOAT16, FLOAT32, INT32)");
  }
  if (HasInput(c, 1)) {
    if (auto v = ConstantInts(c, 1); !v.ok()) return v.status();
  }
  auto p = PlanReduce(c.node, c.attrs, x.shape, kind, HasInput(c, 1) ? c.constants[1] : nullptr);
  if (!p.ok()) return p.status();
  return std::vector<TensorType>{{IsArg(kind) ? v1::INT64 : x.dtype, p->out}};
}

// ArgMax (ArgMin): the index of the first (select_last_index: last) maximum
// (minimum) along the axis; a NaN first element wins, later NaNs are skipped
// (scalar: a search).
absl::Status RunArg(RunContext& ctx, Reduce kind) {
  const bool min = kind == Reduce::kArgMin;
  const HostTensor& x = *ctx.inputs[0];
  const HostTensor& out = ctx.outputs[0];
  const Shape& in = x.type().shape;
  auto plan = PlanReduce(ctx.node, ctx.attrs, in, kind, nullptr);
  if (!plan.ok()) return plan.status();
  const bool last_index = ctx.attrs.Int("select_last_index", 0).value_or(0) != 0;
  int64_t axis = 0;
  while (!plan->reduced[axis]) ++axis;
  const int64_t len = in[axis];
  int64_t inner = 1;
  for (size_t d = static_cast<size_t>(axis) + 1; d < in.size(); ++d) inner *= in[d];
  const int64_t outputs = out.type().elements();
  int64_t* arg = out.mutable_as<int64_t>();
  const int64_t in_bytes = static_cast<int64_t>(ElementSize(x.type().dtype));
  auto scan = [&](const auto* src) {
    ForEachUnitTile(ctx, outputs, [&](device::TileWork& w, int64_t o0, int64_t o1) {
      for (int64_t o = o0; o < o1; ++o) {
        const auto* s = src + (o / inner) * len * inner + o % inner;
        auto acc = s[0];
        int64_t best = 0;
        for (int64_t i = 1; i < len; ++i) {
          const auto v = s[i * inner];
          if ((min ? v < acc : v > acc) || (last_index && v == acc)) acc = v, best = i;
        }
        arg[o] = best;
        w += VectorChunkWork(len, len * in_bytes, 0, 4, device::VectorPasses(device::VectorKernel::kReduce));
      }
      w.mte3_bytes += static_cast<uint64_t>((o1 - o0) * 8);
    });
  };
  // INT32 is compared as integers (in fp32, values past 2^24 would tie); fp16
  // is widened once (the MTE2 load into UB converts fp16 to fp32).
  if (x.type().dtype == v1::INT32) {
    scan(x.as<int32_t>());
  } else if (x.type().dtype == v1::FLOAT32) {
    scan(x.as<float>());
  } else {
    std::vector<float> widened(static_cast<size_t>(x.type().elements()));
    LoadAsFloat(x, 0, 1, x.type().elements(), widened.data());
    scan(static_cast<const float*>(widened.data()));
  }
  return absl::OkStatus();
}

// The input as dims merged into runs of kept or reduced dims (size-1 dims
// dropped), row-major; never empty.
struct DimGroup {
  int64_t size;
  bool reduced;
};

std::vector<DimGroup> MergedGroups(const Shape& in, const std::vector<bool>& reduced) {
  std::vector<DimGroup> groups;
  for (size_t d = 0; d < in.size(); ++d) {
    if (in[d] == 1) continue;
    if (!groups.empty() && groups.back().reduced == reduced[d]) {
      groups.back().size *= in[d];
    } else {
      groups.push_back({in[d], static_cast<bool>(reduced[d])});
    }
  }
  if (groups.empty()) groups.push_back({1, false});
  return groups;
}

// Offsets (row-major over `groups`) of every index combination of the groups
// whose `reduced` flag is `want`, leaving out group `skip`; in index order.
std::vector<int64_t> OffsetsOf(const std::vector<DimGroup>& groups, bool want, size_t skip) {
  std::vector<int64_t> strides(groups.size());
  int64_t stride = 1;
  for (size_t g = groups.size(); g-- > 0;) strides[g] = stride, stride *= groups[g].size;
  std::vector<int64_t> offs{0};
  for (size_t g = 0; g < groups.size(); ++g) {
    if (groups[g].reduced != want || g == skip) continue;
    std::vector<int64_t> next;
    next.reserve(offs.size() * static_cast<size_t>(groups[g].size));
    for (int64_t base : offs) {
      for (int64_t i = 0; i < groups[g].size; ++i) next.push_back(base + i * strides[g]);
    }
    offs = std::move(next);
  }
  return offs;
}

device::VectorKernel PassesOf(Reduce kind) {
  switch (kind) {
    case Reduce::kProd:
    case Reduce::kLogSum:  // the sum, then one Ln per output
    case Reduce::kL1: return device::VectorKernel::kReduce;
    case Reduce::kL2:
    case Reduce::kSumSquare: return device::VectorKernel::kReduceSquares;
    case Reduce::kLogSumExp: return device::VectorKernel::kReduceLogSumExp;
    default: return device::VectorKernel::kReduce;
  }
}

kernels::ReduceKind KernelKind(Reduce kind) {
  return kind == Reduce::kMax ? kernels::ReduceKind::kMax
         : kind == Reduce::kMin ? kernels::ReduceKind::kMin
                                : kernels::ReduceKind::kSum;
}

// INT32 reductions are exact (in int64; ONNX and NumPy reduce integers as
// integers): a sum wraps to int32 as integer arithmetic does, a mean truncates
// toward zero (NumPy's mean cast back, as ONNX's reference does), a mean of
// nothing is 0 (max/min of nothing are refused when planned). Widened to fp32
// they lost bits past 2^24, and a sum past INT32_MAX converted back was
// undefined behaviour (found by fuzz/graph_fuzzer).
struct Int32Reduction {
  Reduce kind;
  int64_t count;  // elements per output
  __int128 acc = 0;  // a sum of up to 2^40 (kMaxElements) int32s passes int64; the mean needs it exact

  void Start() {
    acc = kind == Reduce::kMax ? INT32_MIN : kind == Reduce::kMin ? INT32_MAX : 0;
  }
  void Add(int32_t v) {
    if (kind == Reduce::kMax) {
      acc = std::max<__int128>(acc, v);
    } else if (kind == Reduce::kMin) {
      acc = std::min<__int128>(acc, v);
    } else {
      acc += v;
    }
  }
  int32_t Finish() const {
    if (kind == Reduce::kMean) return count == 0 ? 0 : static_cast<int32_t>(acc / count);  // |mean| <= 2^31
    return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(acc)));  // wraps
  }
};

// Folds `n` values (get(i), in index order) by one of IsElementFold's kinds.
template <typename Get>
float FoldElements(Reduce kind, int64_t n, const Get& get) {
  if (kind == Reduce::kLogSumExp) {
    float m = -std::numeric_limits<float>::infinity();
    for (int64_t i = 0; i < n; ++i) m = std::max(m, get(i));  // NaN is dropped here but kept by the sum below
    if (std::isinf(m)) return m;                              // all -inf (or none): -inf; any +inf: +inf
    float sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += std::exp(get(i) - m);
    return m + std::log(sum);
  }
  float acc = kind == Reduce::kProd ? 1.0f : 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    const float v = get(i);
    switch (kind) {
      case Reduce::kProd: acc *= v; break;
      case Reduce::kL1: acc += std::abs(v); break;
      case Reduce::kLogSum: acc += v; break;
      default: acc += v * v; break;  // L2, SumSquare
    }
  }
  return kind == Reduce::kL2 ? std::sqrt(acc) : kind == Reduce::kLogSum ? std::log(acc) : acc;
}

// Sum, mean, max or min. When the innermost merged dim is reduced, each output
// reduces contiguous runs (a row kernel); when it is kept, a block of
// contiguous outputs accumulates one input slice after another (vectorised
// across the outputs). Either way each output's order is fixed by the shape.
absl::Status RunReduce(RunContext& ctx, Reduce kind) {
  const HostTensor& x = *ctx.inputs[0];
  const HostTensor& out = ctx.outputs[0];
  auto plan = PlanReduce(ctx.node, ctx.attrs, x.type().shape, kind, ctx.inputs.size() > 1 ? ctx.inputs[1] : nullptr);
  if (!plan.ok()) return plan.status();
  const std::vector<DimGroup> groups = MergedGroups(x.type().shape, plan->reduced);
  const bool rows = groups.back().reduced;
  const int64_t inner = groups.back().size;
  const size_t last = groups.size() - 1;
  // rows: run offsets within an output's slice and each output's base; else
  // the reduced offsets and each block of `inner` outputs' base. An empty
  // input needs neither (its outputs are the identity) and may have a huge
  // reduced dim beside its 0 ([2^31, 5, 0] over axes 0 and 2: 2^31 offsets).
  const bool empty = x.type().elements() == 0;
  const std::vector<int64_t> reduced_offs = empty ? std::vector<int64_t>{} : OffsetsOf(groups, true, rows ? last : groups.size());
  const std::vector<int64_t> bases = empty ? std::vector<int64_t>{} : OffsetsOf(groups, false, rows ? groups.size() : last);
  int64_t count = 1;
  for (const DimGroup& g : groups) count *= g.reduced ? g.size : 1;
  if (empty) count = 0;
  // Integer tensors are widened once; float tensors are read in place.
  const bool integer = x.type().dtype == v1::INT32;
  const int64_t outputs = out.type().elements();
  std::vector<float> result(integer ? 0 : static_cast<size_t>(outputs));
  std::vector<int32_t> int_result(integer ? static_cast<size_t>(outputs) : 0);
  const kernels::ReduceKind kk = KernelKind(kind);
  const float init = kind == Reduce::kMax ? -std::numeric_limits<float>::infinity()
                     : kind == Reduce::kMin ? std::numeric_limits<float>::infinity()
                                            : 0.0f;
  const kernels::VectorKernelSet& k = kernels::VectorKernels();
  const int64_t units = count == 0 ? outputs : static_cast<int64_t>(bases.size());
  const int64_t in_bytes = static_cast<int64_t>(ElementSize(x.type().dtype));
  const int64_t out_bytes = static_cast<int64_t>(ElementSize(out.type().dtype));
  const float* values = x.type().dtype == v1::FLOAT32 ? x.as<float>() : nullptr;
  std::vector<float> wide16;  // the element folds read fp16 widened once
  if (IsElementFold(kind) && values == nullptr) {
    wide16.resize(static_cast<size_t>(x.type().elements()));
    LoadAsFloat(x, 0, 1, x.type().elements(), wide16.data());
    values = wide16.data();
  }
  const int64_t per_run = rows ? inner : 1;
  ForEachUnitTile(ctx, units, [&](device::TileWork& w, int64_t u0, int64_t u1) {
    for (int64_t u = u0; u < u1 && count > 0; ++u) {
      if (IsElementFold(kind)) {
        for (int64_t j = 0; j < (rows ? 1 : inner); ++j) {
          result[rows ? u : u * inner + j] = FoldElements(kind, count, [&](int64_t i) {
            return values[bases[u] + reduced_offs[i / per_run] + (rows ? i % per_run : j)];
          });
        }
      } else if (integer) {
        const int32_t* xi = x.as<int32_t>();
        Int32Reduction r{kind, count};
        if (rows) {
          r.Start();
          for (int64_t ro : reduced_offs) {
            for (int64_t i = 0; i < inner; ++i) r.Add(xi[bases[u] + ro + i]);
          }
          int_result[u] = r.Finish();
        } else {
          for (int64_t i = 0; i < inner; ++i) {
            r.Start();
            for (int64_t ro : reduced_offs) r.Add(xi[bases[u] + ro + i]);
            int_result[u * inner + i] = r.Finish();
          }
        }
      } else if (rows) {
        float acc = init;
        for (int64_t ro : reduced_offs) {
          const float v = k.reduce(kk, SrcAt(x, bases[u] + ro), static_cast<size_t>(inner));
          if (kind == Reduce::kSum || kind == Reduce::kMean) {
            acc += v;
          } else if ((kind == Reduce::kMax ? v > acc : v < acc) || v != v) {  // a NaN sticks
            acc = v;
          }
        }
        result[u] = acc;
      } else {
        float* acc = result.data() + u * inner;
        std::fill_n(acc, inner, init);
        for (int64_t ro : reduced_offs) k.reduce_into(kk, SrcAt(x, bases[u] + ro), acc, static_cast<size_t>(inner));
      }
      const int64_t elems = count * (rows ? 1 : inner);
      w += VectorChunkWork(elems, elems * in_bytes, 0, 4, device::VectorPasses(PassesOf(kind)));
    }
    // The tile's outputs, rounded once (a mean divides first).
    const int64_t o0 = count == 0 ? u0 : (rows ? u0 : u0 * inner), o1 = count == 0 ? u1 : (rows ? u1 : u1 * inner);
    if (integer) {
      if (count == 0) {
        Int32Reduction empty{kind, 0};
        empty.Start();
        std::fill(int_result.begin() + o0, int_result.begin() + o1, empty.Finish());
      }
      StoreFromInt32(out, o0, o1 - o0, int_result.data() + o0);
      w.mte3_bytes += static_cast<uint64_t>((o1 - o0) * out_bytes);
      return;
    }
    for (int64_t o = o0; o < o1; ++o) {
      if (kind == Reduce::kMean) {
        result[o] = count ? result[o] / static_cast<float>(count) : std::numeric_limits<float>::quiet_NaN();
      } else if (count == 0) {
        result[o] = IsElementFold(kind) ? FoldElements(kind, 0, [](int64_t) { return 0.0f; }) : init;
      }
    }
    w.overflow_elements += StoreFromFloat(out, o0, o1 - o0, result.data() + o0, ctx.preset.fp16_saturation);
    w.mte3_bytes += static_cast<uint64_t>((o1 - o0) * out_bytes);
  });
  return absl::OkStatus();
}

OpDef ReduceDef(std::string name, Reduce kind) {
  OpDef d;
  d.name = std::move(name);
  d.units = "Vector, MTE2, MTE3";
  d.task_type = device::TaskType::kAiVectorCore;
  d.dtypes = {v1::FLOAT16, v1::FLOAT32, v1::INT32};
  if (IsElementFold(kind)) d.dtypes = {v1::FLOAT16, v1::FLOAT32};
  d.max_inputs = IsArg(kind) ? 1 : 2;
  if (IsArg(kind)) {
    d.attributes = {{"axis", AttrKind::kInt}, {"keepdims", AttrKind::kInt}, {"select_last_index", AttrKind::kInt}};
  } else {
    d.attributes = {{"axes", AttrKind::kInts}, {"keepdims", AttrKind::kInt}, {"noop_with_empty_axes", AttrKind::kInt}};
    d.shape_inputs = {1};
  }
  d.infer = [kind](InferContext& c) { return InferReduce(c, kind); };
  d.run = [kind](RunContext& c) { return IsArg(kind) ? RunArg(c, kind) : RunReduce(c, kind); };
  return d;
}

}  // namespace

void RegisterReduceOps(OpRegistry& r) {
  r.Register(ReduceDef("ReduceSum", Reduce::kSum));
  r.Register(ReduceDef("ReduceMean", Reduce::kMean));
  r.Register(ReduceDef("ReduceMax", Reduce::kMax));
  r.Register(ReduceDef("ReduceMin", Reduce::kMin));
  r.Register(ReduceDef("ArgMax", Reduce::kArgMax));
  r.Register(ReduceDef("ArgMin", Reduce::kArgMin));
  r.Register(ReduceDef("ReduceProd", Reduce::kProd));
  r.Register(ReduceDef("ReduceL1", Reduce::kL1));
  r.Register(ReduceDef("ReduceL2", Reduce::kL2));
  r.Register(ReduceDef("ReduceSumSquare", Reduce::kSumSquare));
  r.Register(ReduceDef("ReduceLogSumExp", Reduce::kLogSumExp));
  r.Register(ReduceDef("ReduceLogSum", Reduce::kLogSum));
}

}  // namespace npu::graph::ops
