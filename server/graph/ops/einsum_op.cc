// Einsum (ONNX opset 12+) with one or two operands, the forms torch.einsum
// exports. A contraction of two operands (a label in both and not in the
// output) runs on the Cube as one batched MatMul: the labels in both operands
// and the output are the batch, those of the first operand only the rows, of
// the second only the columns, the contracted ones the depth. An operand whose
// labels are not in that order (batch, rows, depth / batch, depth, columns, or
// the transposes the Cube reads directly) is laid out by MTE first, and so is
// the output. Everything else (one operand: transposes and sums; products
// without contraction: outer and elementwise; labels summed from one operand
// only) runs on the Vector unit in fp32, summed in index order and rounded once.
#include <algorithm>
#include <numeric>
#include <vector>

#include "kernels/cube_gemm.h"
#include "server/device/vector_passes.h"
#include "server/graph/element_access.h"
#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/cube_problem.h"
#include "server/graph/ops/einsum_equation.h"
#include "server/graph/ops/strided_copy.h"
#include "server/graph/ops/vector_chunks.h"
#include "server/graph/shape_math.h"
#include "server/graph/vector_tiling.h"

namespace npu::graph::ops {
namespace {

// The most products the Vector form may sum in one run (seconds on the host).
constexpr double kMaxLoopTerms = 4294967296.0;  // 2^32

// Contiguous element strides of `shape`.
std::vector<int64_t> Strides(const Shape& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d) s[d] = s[d + 1] * shape[d + 1];
  return s;
}

// The stride of `label` in operand `k` (0 where it does not appear: the operand repeats along it).
int64_t LabelStride(const EinsumEquation& e, int k, const std::vector<int64_t>& strides, int label) {
  const auto& l = e.operands[static_cast<size_t>(k)];
  const auto it = std::find(l.begin(), l.end(), label);
  return it == l.end() ? 0 : strides[static_cast<size_t>(it - l.begin())];
}

// The Vector form: every output element the fp32 sum, over the summed labels
// in index order, of the product of the operands' elements.
struct LoopPlan {
  std::vector<int64_t> out_dims, sum_dims;
  std::vector<std::vector<int64_t>> out_strides, sum_strides;  // per operand
  int64_t sum_count = 1;
};

// The Cube form: batch x (m x k) x (k x n).
struct CubeForm {
  int64_t batch = 1, m = 1, n = 1, k = 1;
  bool trans_a = false, trans_b = false;
  bool copy_a = false, copy_b = false, copy_c = false;
  StridedRegion a_region, b_region, c_region;  // copy_*: into (out of, for C) the GEMM's layout
  Shape a_shape, b_shape, c_shape;             // the GEMM's operands when copied
};

struct EinsumPlan {
  bool cube = false;
  LoopPlan loops;
  CubeForm gemm;
  device::OpWork work;  // the Cube's tiles (shapes alone decide them)
};

LoopPlan PlanLoops(const EinsumEquation& e, const std::vector<Shape>& shapes) {
  LoopPlan p;
  std::vector<int> summed;
  for (size_t l = 0; l < e.used.size(); ++l) {
    if (e.used[l] && !e.InOutput(static_cast<int>(l))) summed.push_back(static_cast<int>(l));
  }
  for (int l : e.output) p.out_dims.push_back(e.size[static_cast<size_t>(l)]);
  // The summed labels come from different operands, so their product is not
  // one tensor's (2^40 x 2^40 before a 0): counted wide, then saturated (the
  // caller refuses more than kMaxLoopTerms anyway).
  long double count = 1;
  for (int l : summed) {
    p.sum_dims.push_back(e.size[static_cast<size_t>(l)]);
    count *= static_cast<long double>(e.size[static_cast<size_t>(l)]);
  }
  p.sum_count = count > static_cast<long double>(kMaxElements) ? kMaxElements + 1 : static_cast<int64_t>(count);
  for (size_t k = 0; k < shapes.size(); ++k) {
    const std::vector<int64_t> st = Strides(shapes[k]);
    std::vector<int64_t> os, ss;
    for (int l : e.output) os.push_back(LabelStride(e, static_cast<int>(k), st, l));
    for (int l : summed) ss.push_back(LabelStride(e, static_cast<int>(k), st, l));
    p.out_strides.push_back(std::move(os));
    p.sum_strides.push_back(std::move(ss));
  }
  return p;
}

// The label lists concatenated.
std::vector<int> Concat(std::initializer_list<const std::vector<int>*> parts) {
  std::vector<int> r;
  for (const auto* p : parts) r.insert(r.end(), p->begin(), p->end());
  return r;
}

// The product of the labels' sizes.
int64_t Product(const EinsumEquation& e, const std::vector<int>& labels) {
  int64_t n = 1;
  for (int l : labels) n *= e.size[static_cast<size_t>(l)];
  return n;
}

// The region that copies operand `k` (of `shape`) into the order `labels`, contiguous.
StridedRegion RegionInto(const EinsumEquation& e, int k, const Shape& shape, const std::vector<int>& labels,
                         Shape* dst_shape) {
  StridedRegion r;
  const std::vector<int64_t> st = Strides(shape);
  for (int l : labels) {
    r.shape.push_back(e.size[static_cast<size_t>(l)]);
    r.src_strides.push_back(LabelStride(e, k, st, l));
  }
  r.dst_strides = Strides(r.shape);
  *dst_shape = r.shape;
  return r;
}

// Whether the Cube runs it, and how: labels classified, operands and output in the GEMM's order.
bool PlanCube(const EinsumEquation& e, const std::vector<Shape>& shapes, CubeForm& f) {
  if (e.operands.size() != 2) return false;
  std::vector<int> batch, rows, cols, depth;
  for (int l : e.output) {
    const bool a = e.In(0, l), b = e.In(1, l);
    (a && b ? batch : a ? rows : cols).push_back(l);
  }
  for (int l : e.operands[0]) {
    if (e.InOutput(l)) continue;
    if (!e.In(1, l)) return false;  // summed from A alone: the Vector form
    depth.push_back(l);
  }
  for (int l : e.operands[1]) {
    if (!e.InOutput(l) && !e.In(0, l)) return false;  // summed from B alone
  }
  if (depth.empty()) return false;  // no contraction: products are exact in fp32 on the Vector unit
  f.batch = Product(e, batch), f.m = Product(e, rows), f.n = Product(e, cols), f.k = Product(e, depth);
  const auto& a = e.operands[0];
  const auto& b = e.operands[1];
  if (a == Concat({&batch, &rows, &depth})) {
  } else if (a == Concat({&batch, &depth, &rows})) {
    f.trans_a = true;
  } else {
    f.copy_a = true;
    f.a_region = RegionInto(e, 0, shapes[0], Concat({&batch, &rows, &depth}), &f.a_shape);
  }
  if (b == Concat({&batch, &depth, &cols})) {
  } else if (b == Concat({&batch, &cols, &depth})) {
    f.trans_b = true;
  } else {
    f.copy_b = true;
    f.b_region = RegionInto(e, 1, shapes[1], Concat({&batch, &depth, &cols}), &f.b_shape);
  }
  const std::vector<int> gemm_out = Concat({&batch, &rows, &cols});
  if (gemm_out != e.output) {
    f.copy_c = true;
    // From the GEMM's [batch, rows, cols] to the output: the region walks the output, reading C strided.
    StridedRegion r;
    const std::vector<int64_t> cst = Strides([&] {
      Shape s;
      for (int l : gemm_out) s.push_back(e.size[static_cast<size_t>(l)]);
      return s;
    }());
    for (int l : e.output) {
      r.shape.push_back(e.size[static_cast<size_t>(l)]);
      const auto at = std::find(gemm_out.begin(), gemm_out.end(), l) - gemm_out.begin();
      r.src_strides.push_back(cst[static_cast<size_t>(at)]);
    }
    r.dst_strides = Strides(r.shape);
    f.c_region = r;
    for (int l : gemm_out) f.c_shape.push_back(e.size[static_cast<size_t>(l)]);
  }
  return true;
}

absl::StatusOr<std::vector<TensorType>> InferEinsum(InferContext& c) {
  const DataType dt = c.inputs[0]->dtype;
  std::vector<Shape> shapes;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (!IsFloat(c.inputs[i]->dtype) || c.inputs[i]->dtype != dt) {
      return NodeError(c.node, InputLabel(c.node, static_cast<int>(i)), ": dtype ", DataTypeName(c.inputs[i]->dtype),
                       " must be FLOAT16 or FLOAT32 and match input 0");
    }
    shapes.push_back(c.inputs[i]->shape);
  }
  auto equation = c.attrs.String("equation", "");
  if (!equation.ok()) return equation.status();
  if (equation->empty()) return NodeError(c.node, "attribute \"equation\" is required");
  auto e = ParseEinsum(c.node, *equation, shapes);
  if (!e.ok()) return e.status();
  Shape out;
  for (int l : e->output) out.push_back(e->size[static_cast<size_t>(l)]);
  EinsumPlan plan;
  plan.cube = PlanCube(*e, shapes, plan.gemm);
  if (plan.cube) {
    const CubeForm& f = plan.gemm;
    auto model = PlanCubeModel(c, f.batch, f.m, f.n, f.k);
    if (!model.ok()) return model.status();
    for (int64_t i = 0; i < f.batch && f.m > 0 && f.n > 0; ++i) {
      AppendModelGemm(f.m, f.n, f.k, CubeType(dt), *model, static_cast<uint64_t>(i), static_cast<uint64_t>(i),
                      *c.preset, plan.work);
    }
  } else {
    plan.loops = PlanLoops(*e, shapes);
    // Each output element sums sum_count products: bounded, so no equation makes a run take hours.
    auto out_elements = CheckedElements(out, "the output");
    if (!out_elements.ok()) return AtNode(c.node, out_elements.status());
    const double terms = static_cast<double>(*out_elements) * static_cast<double>(plan.loops.sum_count);
    if (terms > kMaxLoopTerms) {
      return NodeError(c.node, "equation \"", *equation, "\" sums ", terms, " products on the Vector unit, more than ",
                       kMaxLoopTerms, " (a contraction of two operands runs on the Cube)");
    }
  }
  c.Prepare(std::move(plan));
  return std::vector<TensorType>{{dt, out}};
}

absl::Status RunLoops(RunContext& ctx, const LoopPlan& p) {
  const HostTensor& out = ctx.outputs[0];
  const int64_t n = out.type().elements();
  std::vector<std::vector<float>> in(ctx.inputs.size());
  for (size_t k = 0; k < ctx.inputs.size(); ++k) {
    in[k].resize(static_cast<size_t>(ctx.inputs[k]->type().elements()));
    LoadAsFloat(*ctx.inputs[k], 0, 1, ctx.inputs[k]->type().elements(), in[k].data());
  }
  std::vector<float> y(static_cast<size_t>(n));
  const size_t ops = in.size(), odims = p.out_dims.size(), sdims = p.sum_dims.size();
  const int64_t esize = static_cast<int64_t>(ElementSize(out.type().dtype));
  ForEachUnitTile(ctx, n, [&](device::TileWork& w, int64_t o0, int64_t o1) {
    std::vector<int64_t> base(ops), at(ops), idx(sdims);
    for (int64_t o = o0; o < o1; ++o) {
      std::fill(base.begin(), base.end(), 0);
      for (int64_t rem = o, d = static_cast<int64_t>(odims) - 1; d >= 0; --d) {
        const int64_t i = rem % p.out_dims[d];
        rem /= p.out_dims[d];
        for (size_t k = 0; k < ops; ++k) base[k] += i * p.out_strides[k][d];
      }
      float acc = 0.0f;
      std::fill(idx.begin(), idx.end(), 0);
      at = base;
      for (int64_t s = 0; s < p.sum_count; ++s) {
        float prod = in[0][at[0]];
        for (size_t k = 1; k < ops; ++k) prod *= in[k][at[k]];
        acc = s == 0 ? prod : acc + prod;
        // The next summed index (odometer, last label fastest).
        for (int64_t d = static_cast<int64_t>(sdims) - 1; d >= 0; --d) {
          for (size_t k = 0; k < ops; ++k) at[k] += p.sum_strides[k][d];
          if (++idx[d] < p.sum_dims[d]) break;
          for (size_t k = 0; k < ops; ++k) at[k] -= idx[d] * p.sum_strides[k][d];
          idx[d] = 0;
        }
      }
      y[o] = p.sum_count == 0 ? 0.0f : acc;
    }
    const int64_t terms = (o1 - o0) * std::max<int64_t>(1, p.sum_count);
    w += VectorChunkWork(terms, terms * esize * static_cast<int64_t>(ops), (o1 - o0) * esize, 4,
                         static_cast<int64_t>(ops) * device::VectorPasses(device::VectorKernel::kMul));
  });
  ctx.work.tiles[0].overflow_elements += StoreFromFloat(out, 0, n, y.data(), ctx.preset.fp16_saturation);
  return absl::OkStatus();
}

absl::Status RunEinsum(RunContext& ctx) {
  const EinsumPlan& plan = ctx.State<EinsumPlan>();
  if (!plan.cube) return RunLoops(ctx, plan.loops);
  const CubeForm& f = plan.gemm;
  const HostTensor& out = ctx.outputs[0];
  if (out.type().elements() == 0) {
    ctx.work.task_type = device::TaskType::kAiCore;
    return absl::OkStatus();
  }
  const DataType dt = out.type().dtype;
  // MTE lays out what the Cube cannot read as it is; those copies count before the GEMM.
  HostTensor a = *ctx.inputs[0], b = *ctx.inputs[1], c = out;
  if (f.copy_a) {
    a = HostTensor::Allocate({dt, f.a_shape});
    CopyRegion(ctx, *ctx.inputs[0], a, f.a_region);
  }
  if (f.copy_b) {
    b = HostTensor::Allocate({dt, f.b_shape});
    CopyRegion(ctx, *ctx.inputs[1], b, f.b_region);
  }
  if (f.copy_c) c = HostTensor::Allocate({dt, f.c_shape});
  std::vector<device::TileWork> layout = std::move(ctx.work.tiles);
  kernels::GemmProblem p = CubeProblem(ctx, dt, dt, dt);
  p.batch = f.batch;
  p.m = f.m, p.n = f.n, p.k = f.k;
  p.a = a.data();
  p.lda = f.trans_a ? f.m : f.k;
  p.trans_a = f.trans_a;
  p.a_batch_stride = f.m * f.k;
  p.b = b.data();
  p.ldb = f.trans_b ? f.k : f.n;
  p.trans_b = f.trans_b;
  p.b_batch_stride = f.k * f.n;
  p.c = c.mutable_data();
  p.ldc = f.n;
  p.c_batch_stride = f.m * f.n;
  SetCubeWork(ctx, plan.work, RunCubeGemm(p));
  ctx.work.tiles.insert(ctx.work.tiles.begin(), layout.begin(), layout.end());
  if (f.copy_c) CopyRegion(ctx, c, out, f.c_region);
  return absl::OkStatus();
}

}  // namespace

void RegisterEinsumOp(OpRegistry& r) {
  OpDef d;
  d.name = "Einsum";
  d.units = "Cube, MTE1, MTE2, FixPipe (contractions; MTE2/MTE3 lay operands out); Vector (the rest)";
  d.task_type = device::TaskType::kAiCore;
  d.dtypes = {v1::FLOAT16, v1::FLOAT32};
  d.min_inputs = 1;
  d.max_inputs = 2;  // ONNX's Einsum is variadic; torch exports one or two operands
  d.variadic = true;
  d.attributes = {{"equation", AttrKind::kString}};
  d.infer = InferEinsum;
  d.run = RunEinsum;
  r.Register(std::move(d));
}

}  // namespace npu::graph::ops
