// MatMul (ONNX / numpy.matmul semantics) on the Cube: fp16 operands (fp32 ones
// are rounded to fp16 on the way in, as an NPU does), fp32 accumulation, output
// in the input dtype. Batch dimensions broadcast. A constant B (weights) is
// packed into the Cube's layout once, when the graph is planned; batches run as
// one Cube call where the broadcast allows (folded into M when B is shared).
#include <algorithm>
#include <vector>

#include "kernels/cube_gemm.h"
#include "server/graph/broadcast.h"
#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/cube_problem.h"

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

// How a run calls the Cube, decided once at plan time.
struct MatMulPlan {
  MatMulDims d;
  device::OpWork work;  // the device's tiles of every batch (shapes alone decide them)
  int64_t batches = 1;  // elements of the output's batch shape
  // kFold: B has no batch of its own, so every batch's rows of A (contiguous)
  // make one GEMM of batches * m rows. kStrided: one Cube call over the batch,
  // A and B each per batch or broadcast. kPerBatch: other broadcasts, one GEMM
  // per output batch.
  enum class Batching { kFold, kStrided, kPerBatch } batching = Batching::kFold;
  bool a_batched = false, b_batched = false;  // kStrided: the operand differs per batch
  std::shared_ptr<const kernels::PackedCubeB> packed_b;  // B constant: packed once, here
  std::shared_ptr<const CubeEpiloguePlan> epilogue;      // fused ops FixPipe applies (fusion.h)
};

bool AllOnes(const Shape& s) {
  return std::all_of(s.begin(), s.end(), [](int64_t d) { return d == 1; });
}

MatMulPlan PlanBatching(const MatMulDims& d) {
  MatMulPlan plan;
  plan.d = d;
  plan.batches = TensorType{v1::FLOAT32, d.batch}.elements();
  // Batch shapes equal to the output's once leading ones are dropped.
  auto full = [&](const Shape& s) { return TensorType{v1::FLOAT32, s}.elements() == plan.batches; };
  if (AllOnes(d.b_batch)) {
    plan.batching = MatMulPlan::Batching::kFold;  // A then has the whole batch
  } else if ((AllOnes(d.a_batch) || full(d.a_batch)) && full(d.b_batch)) {
    plan.batching = MatMulPlan::Batching::kStrided;
    plan.a_batched = !AllOnes(d.a_batch);
    plan.b_batched = true;
  } else {
    plan.batching = MatMulPlan::Batching::kPerBatch;
  }
  return plan;
}

absl::StatusOr<std::vector<TensorType>> InferMatMul(InferContext& c) {
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
  MatMulPlan plan = PlanBatching(*d);
  // The device runs one GEMM per batch (what is counted), whatever the host folds.
  auto model = PlanCubeModel(c, plan.batches, d->m, d->n, d->k);
  if (!model.ok()) return model.status();
  const BroadcastMap amap(d->a_batch, d->batch), bmap(d->b_batch, d->batch);
  for (int64_t i = 0; i < plan.batches && d->m > 0 && d->n > 0; ++i) {
    AppendModelGemm(d->m, d->n, d->k, CubeType(a.dtype), *model, static_cast<uint64_t>(amap.Offset(i)),
                    static_cast<uint64_t>(bmap.Offset(i)), *c.preset, plan.work);
  }
  if (c.constants[1] != nullptr && plan.batching != MatMulPlan::Batching::kPerBatch) {
    const int64_t b_batches = TensorType{v1::FLOAT32, d->b_batch}.elements();
    plan.packed_b = PackConstantB(*c.constants[1], d->k, d->n, d->n, false, b_batches, d->k * d->n, *c.preset);
  }
  const std::vector<TensorType> out{{a.dtype, OutputShape(*d)}};
  plan.epilogue = PlanEpilogue(c);
  if (plan.epilogue) AddEpilogueWork(*plan.epilogue, out[0].elements(), EpilogueOperandTypes(c, *plan.epilogue), plan.work);
  c.Prepare(std::move(plan));
  return out;
}

absl::Status RunMatMul(RunContext& ctx) {
  const MatMulPlan& plan = ctx.State<MatMulPlan>();
  const MatMulDims& d = plan.d;
  const HostTensor& a = *ctx.inputs[0];
  const HostTensor& b = *ctx.inputs[1];
  const HostTensor& out = ctx.outputs[0];
  ctx.work.task_type = device::TaskType::kAiCore;
  // Nothing to compute; with m or n 0 the batch can be huge and each GEMM empty.
  if (out.type().elements() == 0) return absl::OkStatus();

  kernels::GemmProblem p = CubeProblem(ctx, a.type().dtype, b.type().dtype, out.type().dtype);
  p.m = d.m;
  p.n = d.n;
  p.k = d.k;
  p.lda = d.k;
  p.ldb = d.n;
  p.ldc = d.n;
  p.a = a.data();
  p.b = b.data();
  p.packed_b = plan.packed_b.get();
  p.c = out.mutable_data();
  kernels::CubeEpilogue epilogue;
  if (plan.epilogue) {
    epilogue = BindEpilogue(ctx, *plan.epilogue, 0, d.m * d.n);
    p.epilogue = &epilogue;
  }
  uint64_t overflow = 0;
  switch (plan.batching) {
    case MatMulPlan::Batching::kFold:
      p.m = plan.batches * d.m;
      overflow = RunCubeGemm(p);
      break;
    case MatMulPlan::Batching::kStrided:
      p.batch = plan.batches;
      p.a_batch_stride = plan.a_batched ? d.m * d.k : 0;
      p.b_batch_stride = d.k * d.n;
      p.c_batch_stride = d.m * d.n;
      overflow = RunCubeGemm(p);
      break;
    case MatMulPlan::Batching::kPerBatch: {
      const size_t a_elem = ElementSize(a.type().dtype), c_elem = ElementSize(out.type().dtype);
      const BroadcastMap amap(d.a_batch, d.batch), bmap(d.b_batch, d.batch);
      const kernels::CubeEpilogue first = epilogue;
      for (int64_t i = 0; i < plan.batches; ++i) {
        if (ctx.cancel != nullptr && ctx.cancel->load(std::memory_order_relaxed)) break;  // the executor reports it
        p.a = a.data() + amap.Offset(i) * d.m * d.k * a_elem;
        p.b = b.data() + bmap.Offset(i) * d.k * d.n * a_elem;
        p.c = out.mutable_data() + i * d.m * d.n * c_elem;
        // The batch's own C-shaped operands (each GEMM here is batch 0 of its own).
        for (size_t o = 0; o < epilogue.operands.size(); ++o) {
          if (epilogue.operands[o].kind != kernels::EpilogueOperand::Kind::kLikeC) continue;
          epilogue.operands[o].data = static_cast<const char*>(first.operands[o].data) + i * d.m * d.n * c_elem;
        }
        overflow += RunCubeGemm(p);
      }
      break;
    }
  }
  SetCubeWork(ctx, plan.work, overflow);
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
  d.epilogue_axis = -1;  // FixPipe applies fused ops; per-column operands run along the last axis
  r.Register(std::move(d));
}

}  // namespace npu::graph::ops
