// SoftmaxCrossEntropyLoss (ONNX opset 13: scores [N, C], integer labels [N];
// reduction "mean" (default), "sum" or "none"; ignore_index) -> loss and
// log_prob [N, C], and its gradient SoftmaxCrossEntropyLossGrad(dLoss,
// log_prob, labels) -> dScores = dLoss * (softmax - onehot(label)), divided by
// the number of counted rows for "mean" (rows whose label is ignore_index
// count for nothing). Class weights and scores of rank > 2 are not supported.
// Each row is a log-softmax on the Vector unit in fp32; sums run in row order.
#include <cmath>
#include <vector>

#include "kernels/vector_kernels.h"
#include "server/device/vector_passes.h"
#include "server/graph/element_access.h"
#include "server/graph/node_error.h"
#include "server/graph/ops/builtin_ops.h"
#include "server/graph/ops/row_tiles.h"
#include "server/graph/ops/shape_args.h"
#include "server/graph/ops/training_op_def.h"
#include "server/graph/vector_tiling.h"

namespace npu::graph::ops {
namespace {

enum class Reduction { kMean, kSum, kNone };

struct LossAttrs {
  Reduction reduction = Reduction::kMean;
  bool has_ignore = false;
  int64_t ignore_index = 0;
};

absl::StatusOr<LossAttrs> ReadAttrs(const v1::Node& node, const NodeAttributes& attrs) {
  LossAttrs a;
  auto reduction = attrs.String("reduction", "mean");
  if (!reduction.ok()) return reduction.status();
  if (*reduction == "mean") {
    a.reduction = Reduction::kMean;
  } else if (*reduction == "sum") {
    a.reduction = Reduction::kSum;
  } else if (*reduction == "none") {
    a.reduction = Reduction::kNone;
  } else {
    return NodeError(node, "attribute \"reduction\" = \"", *reduction, "\" (expected mean, sum or none)");
  }
  a.has_ignore = attrs.Has("ignore_index");
  if (a.has_ignore) {
    auto ig = attrs.Int("ignore_index");
    if (!ig.ok()) return ig.status();
    a.ignore_index = *ig;
  }
  return a;
}

absl::Status CheckScoresAndLabels(const InferContext& c, const TensorType& scores, int labels_input) {
  const TensorType& labels = *c.inputs[labels_input];
  if (IsFloat(scores.dtype) && scores.shape.size() > 2) {
    return NodeError(c.node, "scores of rank > 2 ([N, C, d1, ...]) are not supported, got ", ToString(scores));
  }
  if (!IsFloat(scores.dtype) || scores.shape.size() != 2) {
    return NodeError(c.node, "scores must be FLOAT16/FLOAT32 [N, C], got ", ToString(scores));
  }
  if ((labels.dtype != v1::INT64 && labels.dtype != v1::INT32) || labels.shape != Shape{scores.shape[0]}) {
    return NodeError(c.node, "input \"", c.node.inputs(labels_input), "\" (labels) must be INT64 or INT32 [",
                     scores.shape[0], "], got ", ToString(labels));
  }
  return absl::OkStatus();
}

// The labels, checked against the class count (ignored rows excepted).
absl::StatusOr<std::vector<int64_t>> Labels(const RunContext& ctx, int input, int64_t classes, const LossAttrs& a) {
  std::vector<int64_t> labels = TensorInts(*ctx.inputs[input]);
  for (size_t i = 0; i < labels.size(); ++i) {
    if (a.has_ignore && labels[i] == a.ignore_index) continue;
    if (labels[i] < 0 || labels[i] >= classes) {
      return NodeError(ctx.node, "input \"", ctx.node.inputs(input), "\": label ", labels[i], " at row ", i,
                       " is not a class in [0, ", classes, ")");
    }
  }
  return labels;
}

int64_t CountedRows(const std::vector<int64_t>& labels, const LossAttrs& a) {
  int64_t n = 0;
  for (int64_t l : labels) n += !(a.has_ignore && l == a.ignore_index);
  return n;
}

absl::StatusOr<std::vector<TensorType>> InferLoss(InferContext& c) {
  auto a = ReadAttrs(c.node, c.attrs);
  if (!a.ok()) return a.status();
  if (c.inputs.size() > 2 && c.inputs[2] != nullptr) {
    return NodeError(c.node, "class weights (input 2) are not supported");
  }
  const TensorType& scores = *c.inputs[0];
  if (auto s = CheckScoresAndLabels(c, scores, 1); !s.ok()) return s;
  const TensorType loss{scores.dtype, a->reduction == Reduction::kNone ? Shape{scores.shape[0]} : Shape{}};
  return std::vector<TensorType>{loss, scores};
}

absl::Status RunLoss(RunContext& ctx) {
  const LossAttrs a = *ReadAttrs(ctx.node, ctx.attrs);
  const HostTensor& scores = *ctx.inputs[0];
  const int64_t n = scores.type().shape[0], classes = scores.type().shape[1];
  auto labels = Labels(ctx, 1, classes, a);
  if (!labels.ok()) return labels.status();
  std::vector<float> logp(static_cast<size_t>(n * classes)), row_loss(static_cast<size_t>(n));
  const int64_t bytes = static_cast<int64_t>(ElementSize(scores.type().dtype));
  const bool saturate = ctx.preset.fp16_saturation;
  ForEachRowTile(ctx, n, [&](int64_t begin, int64_t end, device::TileWork& w) {
    thread_local std::vector<float> row, scratch;
    row.resize(static_cast<size_t>(classes));
    scratch.resize(kernels::SoftmaxScratchFloats(static_cast<size_t>(classes)));
    for (int64_t r = begin; r < end; ++r) {
      LoadAsFloat(scores, r * classes, 1, classes, row.data());
      float* lp = logp.data() + r * classes;
      kernels::VectorKernels().softmax_row(kernels::F32Src(row.data()), kernels::F32Dst(lp),
                                           static_cast<size_t>(classes), /*log=*/true, saturate,
                                           scratch.data());
      const int64_t l = (*labels)[r];
      row_loss[r] = (a.has_ignore && l == a.ignore_index) ? 0.0f : -lp[l];
      w += VectorChunkWork(classes, classes * bytes, classes * bytes, 4, device::VectorPasses(device::VectorKernel::kCrossEntropyRow));
    }
  });
  if (ctx.work.tiles.empty()) ctx.work.tiles.emplace_back();
  device::TileWork& w = ctx.work.tiles[0];
  if (a.reduction == Reduction::kNone) {
    w.overflow_elements += StoreFromFloat(ctx.outputs[0], 0, n, row_loss.data(), saturate);
  } else {
    float total = 0.0f;  // row order
    for (float v : row_loss) total += v;
    if (a.reduction == Reduction::kMean) {
      const int64_t counted = CountedRows(*labels, a);
      total = counted > 0 ? total / static_cast<float>(counted) : std::nanf("");
    }
    w.overflow_elements += StoreFromFloat(ctx.outputs[0], 0, 1, &total, saturate);
    w += VectorChunkWork(n, 0, 4, 4, device::VectorPasses(device::VectorKernel::kReduce));
  }
  if (ctx.outputs.size() > 1) {
    w.overflow_elements += StoreFromFloat(ctx.outputs[1], 0, n * classes, logp.data(), saturate);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<TensorType>> InferLossGrad(InferContext& c) {
  auto a = ReadAttrs(c.node, c.attrs);
  if (!a.ok()) return a.status();
  const TensorType& dloss = *c.inputs[0];
  const TensorType& logp = *c.inputs[1];
  if (auto s = CheckScoresAndLabels(c, logp, 2); !s.ok()) return s;
  const Shape want = a->reduction == Reduction::kNone ? Shape{logp.shape[0]} : Shape{};
  if (!IsFloat(dloss.dtype) || dloss.elements() != TensorType{dloss.dtype, want}.elements()) {
    return NodeError(c.node, "the loss gradient \"", c.node.inputs(0), "\" must be a float ", ShapeToString(want),
                     ", got ", ToString(dloss));
  }
  return std::vector<TensorType>{logp};
}

absl::Status RunLossGrad(RunContext& ctx) {
  const LossAttrs a = *ReadAttrs(ctx.node, ctx.attrs);
  const HostTensor& logp = *ctx.inputs[1];
  const int64_t n = logp.type().shape[0], classes = logp.type().shape[1];
  auto labels = Labels(ctx, 2, classes, a);
  if (!labels.ok()) return labels.status();
  std::vector<float> dloss(static_cast<size_t>(ctx.inputs[0]->type().elements()));
  LoadAsFloat(*ctx.inputs[0], 0, 1, static_cast<int64_t>(dloss.size()), dloss.data());
  const int64_t counted = CountedRows(*labels, a);
  const float mean_div = a.reduction == Reduction::kMean && counted > 0 ? static_cast<float>(counted) : 1.0f;
  const int64_t bytes = static_cast<int64_t>(ElementSize(logp.type().dtype));
  const bool saturate = ctx.preset.fp16_saturation;
  ForEachRowTile(ctx, n, [&](int64_t begin, int64_t end, device::TileWork& w) {
    thread_local std::vector<float> row;
    row.resize(static_cast<size_t>(classes));
    for (int64_t r = begin; r < end; ++r) {
      const int64_t l = (*labels)[r];
      const bool ignored = a.has_ignore && l == a.ignore_index;
      const float g = ignored ? 0.0f : (a.reduction == Reduction::kNone ? dloss[r] : dloss[0]) / mean_div;
      LoadAsFloat(logp, r * classes, 1, classes, row.data());
      for (int64_t j = 0; j < classes; ++j) row[j] = g * (std::exp(row[j]) - (j == l ? 1.0f : 0.0f));
      w.overflow_elements += StoreFromFloat(ctx.outputs[0], r * classes, classes, row.data(), saturate);
      w += VectorChunkWork(classes, classes * bytes, classes * bytes, 4, device::VectorPasses(device::VectorKernel::kCrossEntropyGradRow));
    }
  });
  return absl::OkStatus();
}

}  // namespace

void RegisterLossOps(OpRegistry& r) {
  const std::vector<AttrDef> attributes = {{"reduction", AttrKind::kString, {"mean", "sum", "none"}},
                                           {"ignore_index", AttrKind::kInt}};
  r.Register(WithAttributes(TrainingOpDef("SoftmaxCrossEntropyLoss", 2, 3, 2, InferLoss, RunLoss), attributes));
  r.Register(WithAttributes(TrainingOpDef("SoftmaxCrossEntropyLossGrad", 3, 3, 1, InferLossGrad, RunLossGrad),
                            attributes));
}

}  // namespace npu::graph::ops
