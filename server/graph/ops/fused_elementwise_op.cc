#include "server/graph/ops/fused_elementwise_op.h"

#include <atomic>
#include <vector>

#include "server/graph/ops/vector_chunks.h"

namespace npu::graph::ops {
namespace {

absl::Status RunFusedElementwise(RunContext& ctx) {
  const FusedElementwisePlan& plan = ctx.State<FusedElementwisePlan>();
  const HostTensor& x = *ctx.inputs[0];
  const HostTensor& out = ctx.outputs[0];
  const Shape& shape = out.type().shape;
  std::vector<BroadcastMap> maps;
  for (size_t i = 1; i < ctx.inputs.size(); ++i) maps.emplace_back(ctx.inputs[i]->type().shape, shape);
  const bool saturate = ctx.preset.fp16_saturation;
  const bool fp16 = out.type().dtype == v1::FLOAT16;
  std::atomic<uint64_t> overflow{0};
  ForEachChunk(ctx, 1 + static_cast<int64_t>(ctx.inputs.size()), plan.passes, [&](int64_t s, int64_t len) {
    thread_local std::vector<float> acc, scratch;
    thread_local std::vector<std::vector<float>> operand_tmp;
    acc.resize(static_cast<size_t>(len));
    scratch.resize(kernels::EwScratchFloats(static_cast<size_t>(len)));
    operand_tmp.resize(maps.size());
    std::vector<const float*> chunks(maps.size());
    LoadAsFloat(x, s, 1, len, acc.data());
    for (size_t i = 0; i < maps.size(); ++i) chunks[i] = ChunkAsFloat(*ctx.inputs[i + 1], maps[i], s, len, operand_tmp[i]);
    uint64_t n = kernels::RunEwProgram(plan.program, acc.data(), static_cast<size_t>(len), chunks.data(), saturate,
                                       scratch.data());
    n += kernels::CountOverflow(acc.data(), static_cast<size_t>(len), fp16);
    StoreFromFloat(out, s, len, acc.data(), saturate);
    overflow.fetch_add(n, std::memory_order_relaxed);
  });
  if (!ctx.work.tiles.empty()) ctx.work.tiles[0].overflow_elements += overflow.load();
  return absl::OkStatus();
}

}  // namespace

const OpDef& FusedElementwiseOp() {
  static const OpDef* op = [] {
    auto* d = new OpDef;
    d->name = "FusedElementwise";
    d->units = "Vector, MTE2, MTE3";
    d->task_type = device::TaskType::kAiVectorCore;
    d->dtypes = {v1::FLOAT16, v1::FLOAT32};
    d->min_inputs = 1;
    d->max_inputs = 1 + 16;
    d->run = RunFusedElementwise;
    return d;
  }();
  return *op;
}

}  // namespace npu::graph::ops
