// MatMul (ONNX / numpy.matmul semantics) on the Cube: fp16 operands (fp32 ones
// are rounded to fp16 on the way in, as an NPU does), fp32 accumulation, output
// in the input dtype. Batch dimensions broadcast.
#include <vector>

#include "kernels/cube_gemm.h"
#include "server/graph/broadcast.h"
#include "server/graph/cube_tiling.h"
#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"

namespace npu::graph::ops {
namespace {

struct MatMulDims {
  Shape batch;           // broadcast batch shape of the output
  Shape a_batch, b_batch;
  int64_t m = 0, n = 0, k = 0;
  bool a_vector = false, b_vector = false;  // 1-D operands (numpy promotes them)
};

absl::StatusOr<MatMulDims> ComputeDims(const v1::Node& node, const Shape& a, const Shape& b) {
  if (a.empty() || b.empty()) return NodeError(node, "MatMul needs operands of rank >= 1 (got a scalar)");
  MatMulDims d;
  d.a_vector = a.size() == 1;
  d.b_vector = b.size() == 1;
  const Shape a2 = d.a_vector ? Shape{1, a[0]} : a;
  const Shape b2 = d.b_vector ? Shape{b[0], 1} : b;
  d.m = a2[a2.size() - 2];
  d.k = a2.back();
  d.n = b2.back();
  const int64_t kb = b2[b2.size() - 2];
  if (d.k != kb) {
    return NodeError(node, "inner dimensions ", d.k, " (", InputLabel(node, 0), " ", ShapeToString(a),
                     ") and ", kb, " (", InputLabel(node, 1), " ", ShapeToString(b), ") differ");
  }
  d.a_batch.assign(a2.begin(), a2.end() - 2);
  d.b_batch.assign(b2.begin(), b2.end() - 2);
  auto batch = BroadcastShapes(d.a_batch, d.b_batch);
  if (!batch.ok()) return NodeError(node, "batch dimensions: ", batch.status().message());
  d.batch = *batch;
  return d;
}

Shape OutputShape(const MatMulDims& d) {
  Shape out = d.batch;
  if (!d.a_vector) out.push_back(d.m);
  if (!d.b_vector) out.push_back(d.n);
  return out;
}

absl::StatusOr<std::vector<TensorType>> InferMatMul(InferContext& c) {
  if (auto s = c.attrs.CheckKnown({}); !s.ok()) return s;
  const TensorType& a = *c.inputs[0];
  const TensorType& b = *c.inputs[1];
  for (int i = 0; i < 2; ++i) {
    if (!IsFloat(c.inputs[i]->dtype)) {
      return NodeError(c.node, InputLabel(c.node, i), ": dtype ", DataTypeName(c.inputs[i]->dtype),
                       " is not supported (FLOAT16, FLOAT32)");
    }
  }
  if (a.dtype != b.dtype) {
    return NodeError(c.node, InputLabel(c.node, 0), " (", DataTypeName(a.dtype), ") and ", InputLabel(c.node, 1), " (",
                     DataTypeName(b.dtype), ") have different dtypes");
  }
  auto d = ComputeDims(c.node, a.shape, b.shape);
  if (!d.ok()) return d.status();
  return std::vector<TensorType>{{a.dtype, OutputShape(*d)}};
}

kernels::ElemType KernelType(DataType t) {
  return t == v1::FLOAT16 ? kernels::ElemType::kFloat16 : kernels::ElemType::kFloat32;
}

absl::Status RunMatMul(RunContext& ctx) {
  const HostTensor& a = *ctx.inputs[0];
  const HostTensor& b = *ctx.inputs[1];
  const HostTensor& out = ctx.outputs[0];
  auto dims = ComputeDims(ctx.node, a.type().shape, b.type().shape);
  if (!dims.ok()) return dims.status();
  const MatMulDims& d = *dims;
  ctx.work.task_type = device::TaskType::kAiCore;
  // Nothing to compute; with m or n 0 the batch can be huge and each GEMM empty.
  if (out.type().elements() == 0) return absl::OkStatus();
  const BroadcastMap amap(d.a_batch, d.batch), bmap(d.b_batch, d.batch);
  const int64_t batches = TensorType{out.type().dtype, d.batch}.elements();
  const CubePlan plan = PlanCubeTiles(batches, d.m, d.n, d.k, ctx.preset);
  if (auto s = CheckCubeTileFits(plan.tile, ctx.preset); !s.ok()) return s;

  kernels::GemmProblem p;
  p.m = d.m;
  p.n = d.n;
  p.k = d.k;
  p.a_type = p.b_type = KernelType(a.type().dtype);
  p.c_type = KernelType(out.type().dtype);
  p.lda = d.k;
  p.ldb = d.n;
  p.ldc = d.n;
  p.saturate_fp16 = ctx.preset.fp16_saturation;
  p.cancel = ctx.cancel;
  const size_t a_elem = ElementSize(a.type().dtype), c_elem = ElementSize(out.type().dtype);

  std::vector<kernels::CubeTileCounts> counts;
  ctx.work.task_type = device::TaskType::kAiCore;
  for (int64_t i = 0; i < batches; ++i) {
    if (ctx.cancel != nullptr && ctx.cancel->load(std::memory_order_relaxed)) break;  // the executor reports it
    p.a = a.data() + amap.Offset(i) * d.m * d.k * a_elem;
    p.b = b.data() + bmap.Offset(i) * d.k * d.n * a_elem;
    p.c = out.mutable_data() + i * d.m * d.n * c_elem;
    kernels::CubeGemm(p, plan.tile, &counts);
    graph::AppendCubeTiles(counts, d.m, d.n, d.k, plan, static_cast<uint64_t>(amap.Offset(i)),
                           static_cast<uint64_t>(bmap.Offset(i)), ctx.preset, ctx.work);
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterCubeOps(OpRegistry& r) {
  OpDef d;
  d.name = "MatMul";
  d.units = "Cube, MTE1, MTE2, FixPipe";
  d.task_type = device::TaskType::kAiCore;
  d.dtypes = {v1::FLOAT16, v1::FLOAT32};
  d.min_inputs = d.max_inputs = 2;
  d.infer = InferMatMul;
  d.run = RunMatMul;
  r.Register(std::move(d));
}

}  // namespace npu::graph::ops
