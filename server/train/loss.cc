#include "server/train/loss.h"

#include "absl/strings/str_cat.h"
#include "server/train/graph_editor.h"

namespace npu::train {

const char* LossName(LossKind kind) { return kind == LossKind::kCrossEntropy ? "cross_entropy" : "mse"; }

absl::StatusOr<LossIO> AppendLoss(LossKind kind, const std::string& prediction, const graph::TensorType& type,
                                  v1::Graph& graph) {
  GraphEditor g(&graph);
  LossIO io;
  io.labels = g.FreshValue("labels");
  if (kind == LossKind::kCrossEntropy) {
    if (type.shape.size() != 2) {
      return absl::InvalidArgumentError(absl::StrCat("cross_entropy needs the model's output as [batch, classes], "
                                                     "it is ", graph::ToString(type)));
    }
    io.labels_type = {v1::INT64, {type.shape[0]}};
    g.AddInput(io.labels, io.labels_type);
    io.loss = g.Add("SoftmaxCrossEntropyLoss", {prediction, io.labels}, 2, {{"reduction", AttrString("mean")}},
                    "loss")[0];
    return io;
  }
  io.labels_type = {v1::FLOAT32, type.shape};
  g.AddInput(io.labels, io.labels_type);
  const std::string err = g.Add1("Sub", {prediction, io.labels}, {}, "loss/error");
  const std::string sq = g.Add1("Mul", {err, err}, {}, "loss/squared");
  io.loss = g.Add1("ReduceMean", {sq}, {{"keepdims", AttrInt(0)}}, "loss");
  return io;
}

}  // namespace npu::train
