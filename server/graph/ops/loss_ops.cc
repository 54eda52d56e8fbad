// SoftmaxCrossEntropyLoss (ONNX opset 13: scores [N, C] or [N, C, d1, ...],
// integer labels [N] or [N, d1, ...], optional class weights [C]; reduction
// "mean" (default), "sum" or "none"; ignore_index) -> loss and log_prob (the
// scores' shape), NegativeLogLikelihoodLoss (the same over log-probabilities
// given: loss only), and the gradient SoftmaxCrossEntropyLossGrad(dLoss,
// log_prob, labels[, weights]) -> dScores = dLoss * w[label] * (softmax -
// onehot(label)), divided for "mean" by the summed weights of the counted
// positions (w = 1 without weights; a position whose label is ignore_index
// counts for nothing). A position (n, d1, ...) is one row of C classes, C
// apart by the positions' stride; each row is a log-softmax on the Vector
// unit in fp32; the loss's sum (and "mean"'s divisor) adds the positions in
// order in double, rounded to the loss's type once (thousands of positions in
// fp32 would drift past ONNX's 1e-5).
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

// Scores [N, C, d1, ...] as rows: a row is one position (n, d...), its C
// classes `inner` elements apart.
struct Rows {
  int64_t n = 0, classes = 0, inner = 1;
  int64_t count() const { return n * inner; }
  int64_t Start(int64_t r) const { return (r / inner) * classes * inner + r % inner; }
};

Rows RowsOf(const Shape& scores) {
  Rows r;
  r.n = scores[0];
  r.classes = scores[1];
  for (size_t d = 2; d < scores.size(); ++d) r.inner *= scores[d];
  return r;
}

// Labels [N, d1, ...] of scores [N, C, d1, ...] and optional weights [C].
absl::Status CheckScoresAndLabels(const InferContext& c, const TensorType& scores, int labels_input,
                                  int weights_input) {
  if (!IsFloat(scores.dtype) || scores.shape.size() < 2) {
    return NodeError(c.node, "scores must be FLOAT16/FLOAT32 [N, C] or [N, C, d1, ...], got ", ToString(scores));
  }
  const TensorType& labels = *c.inputs[labels_input];
  Shape want = {scores.shape[0]};
  want.insert(want.end(), scores.shape.begin() + 2, scores.shape.end());
  if ((labels.dtype != v1::INT64 && labels.dtype != v1::INT32) || labels.shape != want) {
    return NodeError(c.node, "input \"", c.node.inputs(labels_input), "\" (labels) must be INT64 or INT32 ",
                     ShapeToString(want), ", got ", ToString(labels));
  }
  if (weights_input < static_cast<int>(c.inputs.size()) && c.inputs[weights_input] != nullptr) {
    const TensorType& w = *c.inputs[weights_input];
    if (!IsFloat(w.dtype) || w.shape != Shape{scores.shape[1]}) {
      return NodeError(c.node, "input \"", c.node.inputs(weights_input), "\" (class weights) must be a float [",
                       scores.shape[1], "], got ", ToString(w));
    }
  }
  return absl::OkStatus();
}

// The labels, checked against the class count (ignored positions excepted).
absl::StatusOr<std::vector<int64_t>> Labels(const RunContext& ctx, int input, int64_t classes, const LossAttrs& a) {
  std::vector<int64_t> labels = TensorInts(*ctx.inputs[input]);
  for (size_t i = 0; i < labels.size(); ++i) {
    if (a.has_ignore && labels[i] == a.ignore_index) continue;
    if (labels[i] < 0 || labels[i] >= classes) {
      return NodeError(ctx.node, "input \"", ctx.node.inputs(input), "\": label ", labels[i], " at position ", i,
                       " is not a class in [0, ", classes, ")");
    }
  }
  return labels;
}

// Each position's weight: its class's (1 without weights), 0 where ignored.
std::vector<float> PositionWeights(const RunContext& ctx, int weights_input, const std::vector<int64_t>& labels,
                                   const LossAttrs& a) {
  const HostTensor* w = weights_input < static_cast<int>(ctx.inputs.size()) ? ctx.inputs[weights_input] : nullptr;
  const std::vector<float> classes = w != nullptr ? AsFloats(*w) : std::vector<float>{};
  std::vector<float> out(labels.size());
  for (size_t i = 0; i < labels.size(); ++i) {
    const bool ignored = a.has_ignore && labels[i] == a.ignore_index;
    out[i] = ignored ? 0.0f : classes.empty() ? 1.0f : classes[static_cast<size_t>(labels[i])];
  }
  return out;
}

// "mean"'s divisor: the counted positions' summed weights.
double MeanDivisor(const std::vector<float>& weights) {
  double sum = 0;  // position order
  for (float v : weights) sum += v;
  return sum;
}

absl::StatusOr<std::vector<TensorType>> InferLoss(InferContext& c, bool softmax) {
  auto a = ReadAttrs(c.node, c.attrs);
  if (!a.ok()) return a.status();
  const TensorType& scores = *c.inputs[0];
  if (auto s = CheckScoresAndLabels(c, scores, 1, 2); !s.ok()) return s;
  const TensorType labels = *c.inputs[1];
  const TensorType loss{scores.dtype, a->reduction == Reduction::kNone ? labels.shape : Shape{}};
  if (!softmax) return std::vector<TensorType>{loss};
  return std::vector<TensorType>{loss, scores};
}

// The loss of every position, summed or averaged as the reduction says,
// into output 0; `softmax`: the scores are logits (log_prob, output 1, is
// their log-softmax), else log-probabilities already (NLL).
absl::Status RunLoss(RunContext& ctx, bool softmax) {
  const LossAttrs a = *ReadAttrs(ctx.node, ctx.attrs);
  const HostTensor& scores = *ctx.inputs[0];
  const Rows rows = RowsOf(scores.type().shape);
  auto labels = Labels(ctx, 1, rows.classes, a);
  if (!labels.ok()) return labels.status();
  const std::vector<float> weights = PositionWeights(ctx, 2, *labels, a);
  std::vector<float> logp(softmax ? static_cast<size_t>(scores.type().elements()) : 0);
  std::vector<float> row_loss(static_cast<size_t>(rows.count()));
  const int64_t bytes = static_cast<int64_t>(ElementSize(scores.type().dtype));
  const bool saturate = ctx.preset.fp16_saturation;
  const int64_t C = rows.classes;
  const std::vector<float> all = AsFloats(scores);
  ForEachRowTile(ctx, rows.count(), [&](int64_t begin, int64_t end, device::TileWork& w) {
    thread_local std::vector<float> row, lp, scratch;
    row.resize(static_cast<size_t>(C));
    lp.resize(static_cast<size_t>(C));
    scratch.resize(kernels::SoftmaxScratchFloats(static_cast<size_t>(C)));
    for (int64_t r = begin; r < end; ++r) {
      const int64_t start = rows.Start(r);
      for (int64_t j = 0; j < C; ++j) row[j] = all[static_cast<size_t>(start + j * rows.inner)];
      if (softmax) {
        kernels::VectorKernels().softmax_row(kernels::F32Src(row.data()), kernels::F32Dst(lp.data()),
                                             static_cast<size_t>(C), /*log=*/true, saturate, scratch.data());
        for (int64_t j = 0; j < C; ++j) logp[static_cast<size_t>(start + j * rows.inner)] = lp[j];
      }
      const float* log_probs = softmax ? lp.data() : row.data();  // NLL: the scores are log-probabilities
      const float wr = weights[r];
      row_loss[r] = wr == 0.0f ? 0.0f : -wr * log_probs[(*labels)[r]];
      w += VectorChunkWork(C, C * bytes, softmax ? C * bytes : 0, 4,
                           softmax ? device::VectorPasses(device::VectorKernel::kCrossEntropyRow) : 1);
    }
  });
  if (ctx.work.tiles.empty()) ctx.work.tiles.emplace_back();
  device::TileWork& w = ctx.work.tiles[0];
  if (a.reduction == Reduction::kNone) {
    w.overflow_elements += StoreFromFloat(ctx.outputs[0], 0, rows.count(), row_loss.data(), saturate);
  } else {
    double sum = 0;  // row order
    for (float v : row_loss) sum += v;
    if (a.reduction == Reduction::kMean) {
      const double divisor = MeanDivisor(weights);
      sum = divisor != 0 ? sum / divisor : std::nan("");
    }
    const float total = static_cast<float>(sum);
    w.overflow_elements += StoreFromFloat(ctx.outputs[0], 0, 1, &total, saturate);
    w += VectorChunkWork(rows.count(), 0, 4, 4, device::VectorPasses(device::VectorKernel::kReduce));
  }
  if (softmax && ctx.outputs.size() > 1) {
    w.overflow_elements += StoreFromFloat(ctx.outputs[1], 0, scores.type().elements(), logp.data(), saturate);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<TensorType>> InferLossGrad(InferContext& c) {
  auto a = ReadAttrs(c.node, c.attrs);
  if (!a.ok()) return a.status();
  const TensorType& dloss = *c.inputs[0];
  const TensorType& logp = *c.inputs[1];
  if (auto s = CheckScoresAndLabels(c, logp, 2, 3); !s.ok()) return s;
  const Shape want = a->reduction == Reduction::kNone ? c.inputs[2]->shape : Shape{};
  if (!IsFloat(dloss.dtype) || dloss.elements() != TensorType{dloss.dtype, want}.elements()) {
    return NodeError(c.node, "the loss gradient \"", c.node.inputs(0), "\" must be a float ", ShapeToString(want),
                     ", got ", ToString(dloss));
  }
  return std::vector<TensorType>{logp};
}

absl::Status RunLossGrad(RunContext& ctx) {
  const LossAttrs a = *ReadAttrs(ctx.node, ctx.attrs);
  const HostTensor& logp = *ctx.inputs[1];
  const Rows rows = RowsOf(logp.type().shape);
  auto labels = Labels(ctx, 2, rows.classes, a);
  if (!labels.ok()) return labels.status();
  const std::vector<float> weights = PositionWeights(ctx, 3, *labels, a);
  std::vector<float> dloss(static_cast<size_t>(ctx.inputs[0]->type().elements()));
  LoadAsFloat(*ctx.inputs[0], 0, 1, static_cast<int64_t>(dloss.size()), dloss.data());
  const double divisor = a.reduction == Reduction::kMean ? MeanDivisor(weights) : 1.0;
  const float mean_div = divisor != 0 ? static_cast<float>(divisor) : 1.0f;
  const int64_t bytes = static_cast<int64_t>(ElementSize(logp.type().dtype));
  const bool saturate = ctx.preset.fp16_saturation;
  const int64_t C = rows.classes;
  std::vector<float> grad = AsFloats(logp);  // each element becomes its gradient
  ForEachRowTile(ctx, rows.count(), [&](int64_t begin, int64_t end, device::TileWork& w) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t l = (*labels)[r], start = rows.Start(r);
      const float g = weights[r] * (a.reduction == Reduction::kNone ? dloss[r] : dloss[0]) / mean_div;
      for (int64_t j = 0; j < C; ++j) {
        float& v = grad[static_cast<size_t>(start + j * rows.inner)];
        v = g * (std::exp(v) - (j == l ? 1.0f : 0.0f));
      }
      w += VectorChunkWork(C, C * bytes, C * bytes, 4, device::VectorPasses(device::VectorKernel::kCrossEntropyGradRow));
    }
  });
  if (ctx.work.tiles.empty()) ctx.work.tiles.emplace_back();
  ctx.work.tiles[0].overflow_elements +=
      StoreFromFloat(ctx.outputs[0], 0, logp.type().elements(), grad.data(), saturate);
  return absl::OkStatus();
}

}  // namespace

void RegisterLossOps(OpRegistry& r) {
  const std::vector<AttrDef> attributes = {{"reduction", AttrKind::kString, {"mean", "sum", "none"}},
                                           {"ignore_index", AttrKind::kInt}};
  r.Register(WithAttributes(TrainingOpDef(
                                "SoftmaxCrossEntropyLoss", 2, 3, 2, [](InferContext& c) { return InferLoss(c, true); },
                                [](RunContext& c) { return RunLoss(c, true); }),
                            attributes));
  r.Register(WithAttributes(TrainingOpDef(
                                "NegativeLogLikelihoodLoss", 2, 3, 1, [](InferContext& c) { return InferLoss(c, false); },
                                [](RunContext& c) { return RunLoss(c, false); }),
                            attributes));
  r.Register(WithAttributes(TrainingOpDef("SoftmaxCrossEntropyLossGrad", 3, 4, 1, InferLossGrad, RunLossGrad),
                            attributes));
}

}  // namespace npu::graph::ops
